/**
 * A reader thread (see `DirReader` in dir-snapshot.ts): reads a folder, stats every entry and
 * sends the names and numbers back; or, for a search, reads, types and matches a folder's
 * entries. Built as an entry of its own (dist/dir-reader-worker.js).
 */
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { FIELDS, pickFromDir, statInto, type ReaderMessage, type ReaderReply } from './dir-layout.js';
import { compileNameFilter } from './name-filter.js';

const port = parentPort!;
const lstat = (p: string) => fs.lstatSync(p, { bigint: true, throwIfNoEntry: false });

// Buffers the main thread is done with come back, so that folders listed again and again do not
// leave a trail of dead buffers for the collector. Only buffers of ordinary folders are kept: the
// 9 MB of a 100,000-entry folder would stay with the thread for nothing between its rare listings
// (two threads held 17 MB in the million bench), and allocating them costs far less than the
// folder's stats.
const SPARE_MAX_BYTES = 2 * 1024 * 1024;
const spare: ArrayBuffer[] = [];
function take(bytes: number): ArrayBuffer {
  let best = -1;
  for (let i = 0; i < spare.length; i++) {
    const size = spare[i]!.byteLength;
    if (size >= bytes && size <= bytes * 2 && (best < 0 || size < spare[best]!.byteLength)) best = i;
  }
  return best < 0 ? new ArrayBuffer(bytes) : spare.splice(best, 1)[0]!;
}

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
  try {
    if (job.filter !== undefined) {
      const dir = fs.opendirSync(job.dir, { bufferSize: 1024 });
      try {
        const { names, kinds, count } = pickFromDir(dir, filterFor(job.filter));
        reply({ id: job.id, scan: { names, kinds }, count, ms: performance.now() - start });
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
    reply({ id: job.id, bytes, count: names.length, data, ms: performance.now() - start }, [
      data.buffer as ArrayBuffer,
      bytes.buffer as ArrayBuffer,
    ]);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    reply({ id: job.id, error: { ...(e.code ? { code: e.code } : {}), message: e.message } });
  }
});
