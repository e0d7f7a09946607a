#!/bin/sh
# The image's start: the settings live in /config/settings.json, as in File Browser's image, so
# a container started with the old volumes and flags behaves the same. The file is seeded on
# first start (a mounted /config keeps it); `-c`/`--config` given to the container wins.
set -eu

if [ ! -f /config/settings.json ] && [ -w /config ]; then
  cp /usr/share/filebrowser/settings.json /config/settings.json
fi

for arg in "$@"; do
  case "$arg" in
    -c | -c=* | --config | --config=*) exec filebrowser "$@" ;;
  esac
done
if [ -f /config/settings.json ]; then
  exec filebrowser --config /config/settings.json "$@"
fi
# A read-only /config without the file: the image's defaults, read from where they were put.
exec filebrowser --config /usr/share/filebrowser/settings.json "$@"
