# File Browser in a container. Build: docker build -t filebrowser .
# (--build-arg FFMPEG=true adds ffmpeg for video thumbnails; NODE_IMAGE picks another base).
# Volumes and paths are those of File Browser's image: files in /srv, the database in
# /database/filebrowser.db, settings in /config/settings.json; it listens on port 80.
# See docs/operations.md#container.
ARG NODE_IMAGE=node:20-bookworm-slim

# The release tarball (npm run release) installed with npm, as on any machine; better-sqlite3 and
# the server's native addon (filebrowser-next's install script) are compiled here, so the
# toolchain stays in this stage.
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/contract/package.json packages/contract/
COPY packages/server/package.json packages/server/
COPY packages/web/package.json packages/web/
COPY e2e/package.json e2e/
# The build needs no native package of the server: the one compile is the install below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run release \
 && npm install --global --prefix /opt/filebrowser --no-audit --no-fund \
      --allow-scripts=better-sqlite3,sharp,filebrowser-next ./dist/filebrowser-next-*.tgz

FROM ${NODE_IMAGE}
ARG FFMPEG=false
# tini reaps the processes of the command runner and passes signals on; mailcap's
# /etc/mime.types completes the server's table of file types.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini mailcap $([ "$FFMPEG" = true ] && echo ffmpeg) \
 && rm -rf /var/lib/apt/lists/*
# The base image's user 1000 ("node") becomes "filebrowser": the uid and gid File Browser's
# image ran as, so volumes written by it stay writable.
RUN groupmod -n filebrowser node \
 && usermod -l filebrowser -d /home/filebrowser -m node \
 && mkdir -p /srv /database /config \
 && chown filebrowser:filebrowser /srv /database /config \
 && chmod 0700 /database
COPY --from=build /opt/filebrowser /opt/filebrowser
COPY deploy/docker/settings.json /usr/share/filebrowser/settings.json
COPY deploy/docker/entrypoint.sh deploy/docker/healthcheck.mjs /usr/share/filebrowser/
# The filebrowser command starts node with the server's memory settings (MALLOC_ARENA_MAX=2 and
# --max-semi-space-size, docs/operations.md#the-server-process); `docker run -e MALLOC_ARENA_MAX=..`
# or `-e NODE_OPTIONS=--max-semi-space-size=..` wins over them.
ENV PATH=/opt/filebrowser/bin:$PATH NODE_ENV=production
USER filebrowser
WORKDIR /home/filebrowser
VOLUME ["/srv", "/database", "/config"]
EXPOSE 80
HEALTHCHECK --start-period=10s --interval=30s --timeout=5s --retries=3 \
  CMD ["node", "/usr/share/filebrowser/healthcheck.mjs"]
ENTRYPOINT ["tini", "--", "/usr/share/filebrowser/entrypoint.sh"]
