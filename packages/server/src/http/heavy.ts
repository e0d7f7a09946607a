import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { FairScheduler } from '../heavy-work.js';
import { clientGone, onResponseClosed } from './client-gone.js';

/**
 * A folder whose entries take this much room on the disk is listed as heavy work: some 8,000 to
 * 13,000 entries on ext4, xfs, btrfs and tmpfs, whose folder sizes grow with their entries. Known
 * before the folder is read, from the stat its path gave; a smaller folder is listed at once.
 */
export const BIG_FOLDER_BYTES = 256 * 1024;

/** Whether listing what `stat` describes is heavy work (see `BIG_FOLDER_BYTES`). */
export function isBigFolder(stat: { isDirectory(): boolean; size: number | bigint }): boolean {
  return stat.isDirectory() && Number(stat.size) >= BIG_FOLDER_BYTES;
}

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
