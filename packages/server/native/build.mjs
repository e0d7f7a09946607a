// Builds the server's native addon (fb_native.c) with node-gyp: npm runs this as the server
// package's `install` script (and the release tarball's). The addon only speeds things up
// (src/files/native.ts falls back to plain Node without it), so a failed build is a warning and
// never fails an install: no compiler, another OS, no network for headers.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const here = import.meta.dirname;

function warn(message) {
  console.warn(`filebrowser: native addon not built (${message}); folders are read in JavaScript instead`);
  process.exit(0);
}

// The addon reads folders through the descriptors of pinned folders, which exist on Linux only
// (files/anchor.ts): elsewhere there is nothing for it to do.
if (process.platform !== 'linux') warn(`${process.platform} does not need it`);
if (process.env.FB_NATIVE === 'off') warn('FB_NATIVE=off');

/** npm's own node-gyp: npm names it in lifecycle scripts, and ships it beside itself. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    path.join(
      path.dirname(process.execPath),
      '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
    ),
  ];
  return candidates.find((file) => file && fs.existsSync(file));
}

const gyp = nodeGyp();
if (!gyp) warn('node-gyp not found');

const args = [gyp, 'rebuild'];
// Headers that came with this Node (its installation's include/node) spare node-gyp a download,
// which fails on a machine without internet access; an explicit --nodedir of npm's wins.
const prefix = path.resolve(path.dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && fs.existsSync(path.join(prefix, 'include/node/node_api.h'))) {
  args.push(`--nodedir=${prefix}`);
}
const result = spawnSync(process.execPath, args, { cwd: here, stdio: ['ignore', 'pipe', 'pipe'] });
if (result.status !== 0) {
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n');
  console.warn(output.slice(-15).join('\n'));
  warn(result.error ? result.error.message : `node-gyp exited with ${result.status}`);
}
console.log('filebrowser: native addon built');
