/**
 * A reader thread (see `DirReader` in dir-snapshot.ts): reads a folder, stats every entry and
 * sends the names and numbers back; or, for a search, reads, types and matches a folder's
 * entries. Built as an entry of its own (dist/dir-reader-worker.js).
 */
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import {
  FIELDS,
  pickEntries,
  pickFromDir,
  SPARE_MAX_BYTES,
  statInto,
  type ReaderMessage,
  type ReaderReply,
} from './dir-layout.js';
import { compileNameFilter } from './name-filter.js';

const port = parentPort!;
const lstat = (p: string) => fs.lstatSync(p, { bigint: true, throwIfNoEntry: false });

// Buffers the main thread is done with come back, so that folders listed again and again do not
// leave a trail of dead buffers for the collector. Only buffers of ordinary folders are kept: the
// 9 MB of a 100,000-entry folder would stay with the thread for nothing between its rare listings
// (two threads held 17 MB in the million bench), and allocating them costs far less than the
// folder's stats.
const spare: ArrayBuffer[] = [];
function take(bytes: number): ArrayBuffer {
  let best = -1;
  for (let i = 0; i < spare.length; i++) {
    const size = spare[i]!.byteLength;
    if (size >= bytes && size <= bytes * 2 && (best < 0 || size < spare[best]!.byteLength)) best = i;
  }
  return best < 0 ? new ArrayBuffer(bytes) : spare.splice(best, 1)[0]!;
}

/**
 * A search's folder up to this size (`st_size`: about 1,600 entries on ext4, 3,200 on tmpfs) is
 * read in one `readdirSync`; a bigger one entry by entry (`pickFromDir`, which sorts only the
 * entries kept). Reading entry by entry costs a fixed price per folder (Node builds, promisifies
 * and closes a `Dir` each time: about 12 % of the readers' profile in a tree of 800 folders of
 * 500), more than the sort it saves there.
 */
const BIG_FOLDER_BYTES = 64 * 1024;

// A search sends the same filter with every folder; it is compiled once.
const filters = new Map<string, (name: string) => boolean>();
function filterFor(json: string): (name: string) => boolean {
  let keep = filters.get(json);
  if (!keep) {
    if (filters.size >= 8) filters.clear();
    keep = compileNameFilter(JSON.parse(json));
    filters.set(json, keep);
  }
  return keep;
}

/**
 * This thread's time spent waiting for a core (the kernel's run-queue wait, Linux), in ms; 0
 * elsewhere. A job's time is reported without it: `AdaptiveIo` judges the device by that time,
 * and on a machine with more busy threads than cores a reader thread waits 100 ms and more for
 * its turn (a folder of one entry took 124 ms), which marked a fast disk slow for 30 s and sent
 * every search to the thread pool (bench/results/2026-11-23-first-full-runs-and-where-the-time-went.md).
 */
const schedstat = (() => {
  try {
    return fs.openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return undefined;
  }
})();
const statBuf = Buffer.alloc(96);
function waitedMs(): number {
  if (schedstat === undefined) return 0;
  try {
    // "<ns on a core> <ns waiting for one> <time slices>"
    const n = fs.readSync(schedstat, statBuf, 0, statBuf.length, 0);
    return Number(statBuf.toString('latin1', 0, n).split(' ')[1]) / 1e6 || 0;
  } catch {
    return 0;
  }
}

/**
 * A job shorter than this is reported as it is, without a second look at `schedstat`:
 * `AdaptiveIo` judges no stretch under its `sliceMs` (4 ms), so the wait could only make a
 * figure nobody reads smaller, and the read costs a trip through procfs for each of a search's
 * folders.
 */
const UNJUDGED_MS = 1;

/** Time spent on a job started at `start` (after `waited0`), less the time it waited for a core. */
function jobMs(start: number, waited0: number): number {
  const elapsed = performance.now() - start;
  if (elapsed < UNJUDGED_MS) return elapsed;
  return Math.max(0, elapsed - (waitedMs() - waited0));
}

function reply(message: ReaderReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

port.on('message', (job: ReaderMessage) => {
  if ('recycle' in job) {
    if (job.recycle.byteLength > SPARE_MAX_BYTES) return;
    if (spare.length >= 16) spare.shift();
    spare.push(job.recycle);
    return;
  }
  const start = performance.now();
  const waited0 = waitedMs();
  try {
    if (job.filter !== undefined) {
      const keep = filterFor(job.filter);
      if ((job.size ?? fs.statSync(job.dir).size) <= BIG_FOLDER_BYTES) {
        const dirents = fs.readdirSync(job.dir, { withFileTypes: true });
        const { names, kinds } = pickEntries(dirents, keep);
        reply({ id: job.id, scan: { names, kinds }, count: dirents.length, ms: jobMs(start, waited0) });
        return;
      }
      const dir = fs.opendirSync(job.dir, { bufferSize: 1024 });
      try {
        const { names, kinds, count } = pickFromDir(dir, keep);
        reply({ id: job.id, scan: { names, kinds }, count, ms: jobMs(start, waited0) });
      } finally {
        dir.closeSync();
      }
      return;
    }
    const names = fs.readdirSync(job.dir);
    const data = new Float64Array(take(names.length * FIELDS * 8), 0, names.length * FIELDS);
    statInto(lstat, job.dir === '/' ? '/' : job.dir + '/', names, data, 0, names.length);
    // The names as bytes in a buffer of their own (never Buffer's shared pool), transferred.
    const joined = names.join('\0');
    const length = Buffer.byteLength(joined);
    const bytes = new Uint8Array(take(Math.max(length, 1)), 0, length);
    Buffer.from(bytes.buffer, 0, length).write(joined);
    reply({ id: job.id, bytes, count: names.length, data, ms: jobMs(start, waited0) }, [
      data.buffer as ArrayBuffer,
      bytes.buffer as ArrayBuffer,
    ]);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    reply({ id: job.id, error: { ...(e.code ? { code: e.code } : {}), message: e.message } });
  }
});
