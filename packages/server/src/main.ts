import { setFlagsFromString } from 'node:v8';
import { holdStartupGrowth, releaseStartupGrowth } from './startup-memory.js';

// libuv's thread pool (file operations, bcrypt, sharp) has 4 threads unless UV_THREADPOOL_SIZE is
// set in the environment: setting it here would come too late, since the ES module loader has
// already read this file through the pool. The settings below must precede every dependency,
// so the rest of the program is loaded with a dynamic import (build.mjs keeps it a separate chunk).

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
