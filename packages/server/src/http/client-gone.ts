import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * Calls `then` once the response has closed, also when it closed before this was asked: a client
 * may go away while a handler awaits (the thread pool, the database), and a 'close' listener added
 * after that never fires. `res.closed` is set in the same step that emits 'close'.
 */
export function onResponseClosed(res: ServerResponse, then: () => void): void {
  if (res.closed) queueMicrotask(then);
  else res.once('close', then);
}

/** The reason of a `clientGone` signal: work stopped because nobody waits for its answer. */
export class ClientGone extends Error {
  constructor() {
    super('the client went away');
    this.name = 'ClientGone';
  }
}

/**
 * Aborts (with a `ClientGone`) when the client goes away before the whole answer was sent, at
 * once if it already has.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const abort = new AbortController();
  const res = reply.raw;
  onResponseClosed(res, () => {
    if (!res.writableFinished) abort.abort(new ClientGone());
  });
  return abort.signal;
}
