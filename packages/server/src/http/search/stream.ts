import { PassThrough, type Readable } from 'node:stream';
import { inBackground } from '../../background.js';
import { AppError } from '../../errors.js';
import { statusText } from '../replies.js';

export interface JsonLinesOptions {
  /** An empty line goes out after this long without output, so proxies keep the connection. */
  keepAliveMs: number;
  /** Stops the producer: the client went away. */
  signal: AbortSignal;
  /**
   * Called when producing fails after the answer started: the status line of a refusal is
   * appended (`401 Unauthorized (why)`), or that of a 500.
   */
  onError: (err: unknown) => void;
  /** Later items are sent in batches of about this many bytes or this many milliseconds. */
  batchBytes?: number;
  batchMs?: number;
}

/**
 * Streams items as JSON lines (contract 7): the first at once, later ones in small batches, an
 * empty line after `keepAliveMs` of silence (repeated; the old server sent it once, and clients
 * skip empty lines either way), `500 Internal Server Error` appended when the producer fails.
 * Back-pressure from a slow client pauses the producer; an abort ends it and every timer with it.
 */
export function jsonLines<T>(items: AsyncIterable<T>, opts: JsonLinesOptions): Readable {
  const { keepAliveMs, signal } = opts;
  const batchBytes = opts.batchBytes ?? 16 * 1024;
  const batchMs = opts.batchMs ?? 50;
  const out = new PassThrough();
  let lastWrite = Date.now();
  const write = (text: string): boolean => {
    lastWrite = Date.now();
    return out.write(text);
  };
  const keepAlive = setInterval(
    () => {
      if (Date.now() - lastWrite >= keepAliveMs) write('\n');
    },
    Math.max(1, Math.floor(keepAliveMs / 5)),
  );
  const stop = () => clearInterval(keepAlive);
  signal.addEventListener('abort', stop, { once: true });

  /** Resolves when the client has read enough to take more, or is gone. */
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      out.once('drain', done);
      out.once('close', done);
      signal.addEventListener('abort', done, { once: true });
    });

  const streaming = (async () => {
    let batch = '';
    let batchStarted = 0;
    let first = true;
    const flush = async () => {
      if (!batch) return;
      const ok = write(batch);
      batch = '';
      if (!ok) await drained();
    };
    try {
      for await (const item of items) {
        if (signal.aborted || out.destroyed) break;
        if (!batch) batchStarted = Date.now();
        batch += JSON.stringify(item) + '\n';
        if (first || batch.length >= batchBytes || Date.now() - batchStarted >= batchMs) {
          first = false;
          await flush();
        }
      }
      if (!signal.aborted) await flush();
    } catch (err) {
      opts.onError(err);
      // A refusal says why (the caller's session ended, say); anything else is the plain 500.
      const refused = err instanceof AppError && err.status < 500 ? err : undefined;
      if (!out.destroyed)
        out.write(refused ? statusText(refused.status, refused.message) : '500 Internal Server Error\n');
    } finally {
      stop();
      signal.removeEventListener('abort', stop);
      out.end();
    }
  })();
  inBackground(streaming, opts.onError);
  return out;
}
