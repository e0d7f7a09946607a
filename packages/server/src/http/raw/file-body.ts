import type { ServerResponse } from 'node:http';
import type fsp from 'node:fs/promises';

/** Bytes per read and per socket write. */
export const CHUNK = 256 * 1024;
/** Chunks one transfer may have read but not yet handed to the kernel. */
const IN_FLIGHT = 4;
/** Idle chunks kept for the next transfers (8 MiB). */
const POOL_MAX = 32;

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
  res.once('close', onClose);
  try {
    let pos = start;
    while (pos <= end) {
      while (free === 0 && !failure) await new Promise<void>((r) => (wake = r));
      if (failure) throw failure;
      const want = Math.min(CHUNK, end - pos + 1);
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
