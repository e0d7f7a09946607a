// libuv reads UV_THREADPOOL_SIZE once, when its pool first starts. File operations, bcrypt and
// sharp all share that pool, so it is set before anything else is imported: the rest of the
// program is loaded with a dynamic import, which build.mjs keeps as a separate chunk.
process.env.UV_THREADPOOL_SIZE ??= '16';

const { runCli, processIO } = await import('./cli/index.js');
process.exitCode = await runCli(process.argv.slice(2), processIO());

export {};
