import type { ServerResponse } from 'node:http';
import type fsp from 'node:fs/promises';
import { bundledSendfile, sendFileBytes, socketFd, type SendfileAddon } from './sendfile.js';

/** Bytes per read and per socket write. */
export const CHUNK = 256 * 1024;
/** Chunks one transfer may have read but not yet handed to the kernel. */
const IN_FLIGHT = 4;
/** Idle chunks kept for the next transfers (8 MiB). */
const POOL_MAX = 32;
/**
 * With sendfile: the bytes sent through Node's own queue whenever the socket is full, to learn
 * when it has drained (their write callback); the rest goes straight from the file.
 */
export const PROBE = 16 * 1024;
/** Bytes one sendfile call may send, so that a pool thread is never held for long. */
const SENDFILE_MAX = 8 * 1024 * 1024;
/**
 * How long one sendfile call may wait on a pool thread for a full socket to take more: a fast
 * client keeps being fed without a round trip through the event loop, and a slow one holds a pool
 * thread (shared with every file operation) only this long before Node's queue takes over.
 */
const SENDFILE_WAIT_MS = 10;

const pool: Buffer[] = [];

function takeChunk(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
}

function giveChunk(buf: Buffer): void {
  if (pool.length < POOL_MAX) pool.push(buf);
}

/**
 * Writes bytes `start` to `end` (inclusive) of an open file to a response, reading into a few
 * reused buffers: a buffer is read into again only once the socket has taken its bytes (the
 * write callback). A stream would allocate a fresh buffer for every chunk; at gigabytes per
 * second that is thousands of allocations the C library keeps handing back to the kernel and
 * faulting in again, which costs more than the copies themselves. Resolves when everything is
 * written; rejects when reading fails or the client goes away (the response is then destroyed).
 * Bytes past a shrunken file's end are sent as zeros, so the declared length stays true.
 *
 * With the sendfile addon (`sendfile.ts`) and a plain TCP socket, the kernel copies the file's
 * pages into the socket itself: half the CPU per byte. Node does not know the socket is full
 * then, so each time it is, a small piece (`PROBE`) goes through `res.write` as above, and its
 * callback says the socket has room again; sendfile runs only when Node's queue is empty, which
 * keeps the bytes in order.
 */
export async function writeFileRange(
  res: ServerResponse,
  fh: fsp.FileHandle,
  start: number,
  end: number,
  sendfile: SendfileAddon | undefined = bundledSendfile(),
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
  res.once('close', onClose);
  // A HEAD answer (no body) must not get the file's bytes behind Node's back.
  const fd = sendfile && hasBody(res) ? socketFd(res.socket) : undefined;
  const direct = sendfile && fd !== undefined ? { sendfile, fd } : undefined;
  // The headers and the first bytes always go through Node's queue.
  let kernelNext = false;
  try {
    let pos = start;
    while (pos <= end) {
      if (direct !== undefined && kernelNext) {
        while (free < IN_FLIGHT && !failure) await new Promise<void>((r) => (wake = r));
        if (failure) throw failure;
        // Node may have closed the socket, and its number may be another file's by now: the
        // addon duplicates the descriptor as it starts, so checking here, in the same tick, is enough.
        if (socketFd(res.socket) !== direct.fd) throw new Error('the client went away');
        const count = Math.min(SENDFILE_MAX, end - pos + 1);
        pos += await sendFileBytes(direct.sendfile, direct.fd, fh.fd, pos, count, SENDFILE_WAIT_MS);
        kernelNext = false;
        continue;
      }
      kernelNext = direct !== undefined;
      while (free === 0 && !failure) await new Promise<void>((r) => (wake = r));
      if (failure) throw failure;
      const want = Math.min(direct !== undefined ? PROBE : CHUNK, end - pos + 1);
      const buf = takeChunk();
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
    await new Promise<void>((resolve, reject) => {
      res.end(() => resolve());
      res.once('error', reject);
      res.once('close', () => (res.writableFinished ? resolve() : reject(failure ?? new Error('closed'))));
    });
  } catch (err) {
    res.destroy();
    throw err;
  } finally {
    res.off('close', onClose);
  }
}

function hasBody(res: ServerResponse): boolean {
  return (res as unknown as { _hasBody?: boolean })._hasBody !== false;
}
