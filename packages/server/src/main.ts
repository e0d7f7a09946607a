import { setFlagsFromString } from 'node:v8';
import { holdStartupGrowth, releaseStartupGrowth } from './startup-memory.js';

// libuv reads UV_THREADPOOL_SIZE once, when its pool first starts. File operations, bcrypt and
// sharp all share that pool, so it is set before anything else is imported: the rest of the
// program is loaded with a dynamic import, which build.mjs keeps as a separate chunk.
process.env.UV_THREADPOOL_SIZE ??= '16';

// V8 (Node 20) frees the memory of dead Buffers on a background thread, but counts it as still
// in use until that thread is done; a stream of request bodies (an upload at hundreds of MB/s)
// then looks like runaway external memory and sets off a full collection every few
// milliseconds: an upload spent half its time in them. Freeing it during the collection
// itself costs little and keeps the count true (measured: 2.1 s instead of 4.7 s per GiB).
setFlagsFromString('--no-concurrent-array-buffer-sweeping');
holdStartupGrowth();

const { runCli, processIO } = await import('./cli/index.js');
process.exitCode = await runCli(process.argv.slice(2), processIO());
// Serving resolves here once the server listens; the other commands release it as they start.
releaseStartupGrowth();

export {};
