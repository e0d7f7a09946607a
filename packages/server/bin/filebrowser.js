#!/usr/bin/env node
// The installed `filebrowser` command: runs the bundle that `npm run build` writes to dist/.
process.env.UV_THREADPOOL_SIZE ??= '16';
await import('../dist/main.js');
