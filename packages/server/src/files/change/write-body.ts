import type fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import { shortLivedBuffer } from '../../buffer-garbage.js';

/**
 * Writes all of `chunks`, in order, with as few system calls as it takes: at `position`, or at
 * the file's current position when none is given.
 */
export async function writevAll(fh: fsp.FileHandle, chunks: Buffer[], position?: number): Promise<void> {
  let left = chunks;
  let at = position;
  for (;;) {
    const total = left.reduce((n, c) => n + c.length, 0);
    let done = (await fh.writev(left, at)).bytesWritten;
    if (done >= total) return;
    if (at !== undefined) at += done;
    // A short write (a full disk reports itself on the next write): carry on after what went.
    let i = 0;
    while (done >= left[i]!.length) done -= left[i++]!.length;
    left = [left[i]!.subarray(done), ...left.slice(i + 1)];
  }
}

/** Where a body's chunks come from, one at a time; `stop` ends the reading early. */
interface ChunkSource {
  /** The next chunk; undefined at the end of the body, or once stopped. */
  next(): Promise<Buffer | undefined>;
  /**
   * Stops reading: a `next` still waiting answers undefined at once, and a failure it meets
   * later is dropped (nobody waits for it any more).
   */
  stop(): void;
}

/**
 * A request body read chunk by chunk without being consumed by an async iterator: leaving an
 * iterator early destroys the request (and Node then detaches its socket, so the answer's
 * address, log line and bytes are lost), and one left waiting for a chunk keeps its listener.
 * Stopping here only takes this reader's listeners off: the request stays whole and paused,
 * for its answer and for the connection's drain of what the client still sends
 * (http/connections.ts).
 */
class StreamSource implements ChunkSource {
  private waiting: { resolve: (c: Buffer | undefined) => void; reject: (e: unknown) => void } | undefined;
  private ended = false;
  private failure: unknown;
  private stopped = false;

  constructor(private readonly body: Readable) {
    body.on('readable', this.onReadable);
    body.on('end', this.onEnd);
    body.on('error', this.onError);
    body.on('close', this.onClose);
  }

  next(): Promise<Buffer | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    const chunk = this.body.read() as Buffer | null;
    if (chunk !== null) return Promise.resolve(chunk);
    if (this.failure !== undefined) return Promise.reject(this.failure as Error);
    if (this.ended || this.body.readableEnded) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.body.off('readable', this.onReadable);
    this.body.off('end', this.onEnd);
    this.body.off('error', this.onError);
    this.body.off('close', this.onClose);
    this.settle(undefined);
  }

  private settle(chunk: Buffer | undefined, failure?: unknown): void {
    const w = this.waiting;
    this.waiting = undefined;
    if (!w) return;
    if (failure !== undefined) w.reject(failure);
    else w.resolve(chunk);
  }

  private readonly onReadable = () => {
    if (!this.waiting) return;
    const chunk = this.body.read() as Buffer | null;
    if (chunk !== null) this.settle(chunk);
  };

  private readonly onEnd = () => {
    this.ended = true;
    this.settle(undefined);
  };

  private readonly onError = (err: unknown) => {
    this.failure ??= err;
    this.settle(undefined, this.failure);
  };

  private readonly onClose = () => {
    if (this.ended || this.failure !== undefined) return;
    const err = new Error('the request body ended before its last byte') as NodeJS.ErrnoException;
    err.code = 'ERR_STREAM_PREMATURE_CLOSE';
    this.onError(err);
  };
}

/** Any other source of chunks (a generator): stopping answers a waiting `next` and ends it later. */
class IterableSource implements ChunkSource {
  private readonly it: AsyncIterator<unknown>;
  private wake: (() => void) | undefined;
  private pending: Promise<unknown> | undefined;
  private stopped = false;

  constructor(body: AsyncIterable<unknown>) {
    this.it = body[Symbol.asyncIterator]();
  }

  next(): Promise<Buffer | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      this.wake = () => resolve(undefined);
      // Both outcomes are handled here, also after a stop answered the caller.
      this.pending = this.it.next().then(
        (r) => {
          this.wake = undefined;
          resolve(r.done ? undefined : (r.value as Buffer));
        },
        (err: unknown) => {
          this.wake = undefined;
          reject(err as Error);
        },
      );
    });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const end = async () => {
      await this.it.return?.();
    };
    const ignore = () => undefined;
    // A generator cannot be ended while it runs: it is ended once its pending step settles.
    (this.pending ?? Promise.resolve()).then(end, end).then(ignore, ignore);
    this.wake?.();
  }
}

export interface BodyWrite {
  /** Where the first byte goes; the file's current position when absent. */
  position?: number;
  /** Written bytes after which a flush to the disk is started in the background (one at a time). */
  flushEvery: number;
  /**
   * Called with the bytes received so far before each chunk is taken; it throws to refuse the
   * body (a quota, a declared length), which stops the write with that error.
   */
  check?(received: number): Promise<void> | void;
}

/** Bytes gathered from the body before one write: fewer, larger writes through the thread pool. */
const BATCH = 1024 * 1024;

/**
 * Writes a body to an open file and answers how many bytes it wrote: one batch of about 1 MiB is
 * written (one `writev`, no copy of the bytes) while the next is received, and the disk is asked
 * to flush in the background every `flushEvery` bytes, so the caller's final `sync` waits only
 * for the last stretch. It guarantees:
 * - every write and flush has its rejection handler from the moment it starts, so a write that
 *   fails while the body is still arriving (a full disk, a quota, an I/O error) is never an
 *   unhandled rejection, which would end the process;
 * - that failure ends the write at once, without waiting for the client's next chunk: the caller
 *   answers while the client is still sending, and the connection drains the rest
 *   (http/connections.ts);
 * - the body is never destroyed (see `StreamSource`), and nothing is still writing to the handle
 *   when it returns or throws, so the caller may close, truncate or remove the file.
 */
export async function writeBody(
  fh: fsp.FileHandle,
  body: Readable | AsyncIterable<unknown>,
  opts: BodyWrite,
): Promise<number> {
  const source: ChunkSource = body instanceof Readable ? new StreamSource(body) : new IterableSource(body);
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown) => {
    failure ??= { error };
    source.stop();
  };
  // Neither ever rejects: each failure goes to `fail` where the work is started.
  let writing: Promise<void> = Promise.resolve();
  let flushing: Promise<void> | undefined;
  let position = opts.position;
  let batch: Buffer[] = [];
  let size = 0;
  let written = 0;
  let received = 0;
  let unflushed = 0;
  const startWrite = () => {
    writing = writevAll(fh, batch, position).catch(fail);
    if (position !== undefined) position += size;
    written += size;
    unflushed += size;
    batch = [];
    size = 0;
    if (unflushed >= opts.flushEvery && !flushing) {
      unflushed = 0;
      // Started after this write, so it flushes at least everything written before.
      flushing = writing
        .then(() => (failure ? undefined : fh.datasync()))
        .catch(fail)
        .finally(() => (flushing = undefined));
    }
  };
  try {
    for (;;) {
      const chunk = await source.next();
      if (failure || chunk === undefined) break;
      received += chunk.length;
      await opts.check?.(received);
      shortLivedBuffer(chunk.length);
      batch.push(chunk);
      size += chunk.length;
      if (size < BATCH) continue;
      await writing;
      if (failure) break;
      startWrite();
    }
    if (!failure && size > 0) {
      await writing;
      if (!failure) startWrite();
    }
    await writing;
    await flushing;
    if (failure) throw failure.error;
    return written;
  } finally {
    source.stop();
    await writing;
    await flushing;
  }
}
