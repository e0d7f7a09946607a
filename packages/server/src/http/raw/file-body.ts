import type { ServerResponse } from 'node:http';
import type fsp from 'node:fs/promises';
import { onResponseClosed } from '../client-gone.js';

/**
 * Bytes per read and per socket write. Every read is a hand-off to libuv's thread pool and back
 * (a futex wake, a context switch, an eventfd); at 256 KiB those hand-offs cost the server as much
 * CPU as the copies themselves. 4 MiB cuts a GiB's server CPU by about 40 % (see
 * bench/results/2026-11-26-webdav-rows.md).
 */
export const CHUNK = 4 * 1024 * 1024;
/** Read size of the streams that serve multipart ranges (a fresh buffer per read, so small). */
export const STREAM_CHUNK = 256 * 1024;
/** Chunks one transfer may have read but not yet handed to the kernel: one sent, one read. */
const IN_FLIGHT = 2;
/** Idle chunks kept for the next transfers (8 MiB). */
const POOL_MAX = 2;

const pool: Buffer[] = [];

/** A chunk for a transfer of `bytes`: a pooled one, else one no bigger than the transfer. */
function takeChunk(bytes: number): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(Math.min(CHUNK, bytes));
}

function giveChunk(buf: Buffer): void {
  if (buf.length === CHUNK && pool.length < POOL_MAX) pool.push(buf);
}

/**
 * Writes bytes `start` to `end` (inclusive) of an open file to a response, reading into a few
 * reused buffers: a buffer is read into again only once the socket has taken its bytes (the
 * write callback). A stream would allocate a fresh buffer for every chunk; at gigabytes per
 * second that is thousands of allocations the C library keeps handing back to the kernel and
 * faulting in again, which costs more than the copies themselves. Resolves when everything is
 * written; rejects when reading fails or the client goes away (the response is then destroyed).
 * Bytes past a shrunken file's end are sent as zeros, so the declared length stays true.
 */
export async function writeFileRange(
  res: ServerResponse,
  fh: fsp.FileHandle,
  start: number,
  end: number,
): Promise<void> {
  let free = IN_FLIGHT;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onClose = () => {
    if (!res.writableFinished) failure ??= new Error('the client went away');
    notify();
  };
  onResponseClosed(res, onClose);
  try {
    let pos = start;
    while (pos <= end) {
      while (free === 0 && !failure) await new Promise<void>((r) => (wake = r));
      if (failure) throw failure;
      const buf = takeChunk(end - start + 1);
      // Smaller than CHUNK when it was allocated for a small transfer.
      const want = Math.min(buf.length, end - pos + 1);
      let n: number;
      try {
        ({ bytesRead: n } = await fh.read(buf, 0, want, pos));
      } catch (err) {
        giveChunk(buf);
        throw err;
      }
      if (n === 0) {
        buf.fill(0, 0, want);
        n = want;
      }
      if (failure) {
        giveChunk(buf);
        throw failure;
      }
      pos += n;
      free--;
      res.write(buf.subarray(0, n), (err) => {
        // Only now is the buffer the socket's no more; after an error it may still be queued.
        if (err) failure ??= err;
        else giveChunk(buf);
        free++;
        notify();
      });
    }
    // With few big chunks the client may have gone during the last read: its 'close' is past.
    if (failure) throw failure;
    await new Promise<void>((resolve, reject) => {
      res.once('error', reject);
      onResponseClosed(res, () =>
        res.writableFinished ? resolve() : reject(failure ?? new Error('the client went away')),
      );
      res.end(() => resolve());
    });
  } catch (err) {
    res.destroy();
    throw err;
  } finally {
    res.off('close', onClose);
  }
}
