import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { FairScheduler } from '../heavy-work.js';

export { BIG_FOLDER_BYTES, isBigFolder } from '../heavy-work.js';
import { clientGone, onResponseClosed } from './client-gone.js';

/** The scheduler of a server's heavy requests: `heavyPerUser` at once per user, `heavyQueue` waiting. */
export function heavyRequests(config: AppContext['config']): FairScheduler {
  return new FairScheduler({
    slots: Infinity,
    perOwner: config.heavyPerUser,
    queuePerOwner: config.heavyQueue,
    refusal: {
      message:
        `one user's heavy requests (big listings, searches, archives) run ${config.heavyPerUser} at a ` +
        `time with ${config.heavyQueue} waiting; try again once one has ended`,
      retryAfterSeconds: 2,
    },
  });
}

/**
 * Waits for the caller's turn of heavy work (heavy-work.ts): signed-in users by their id, anyone
 * else (a public share's visitor) by address. The turn lasts until the response has closed, so a
 * streamed listing or archive holds it while it is sent; a client that leaves while waiting
 * leaves the queue. 429 with `Retry-After` past the user's queue.
 */
export async function heavyTurn(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const owner = request.user ? `user:${request.user.id}` : `address:${request.ip}`;
  const end = await ctx.heavy.admit(owner, clientGone(reply));
  onResponseClosed(reply.raw, end);
}
