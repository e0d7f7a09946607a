#!/usr/bin/env node
// The installed `filebrowser` command: runs the bundle that `npm run build` writes to dist/.
await import('../dist/main.js');
