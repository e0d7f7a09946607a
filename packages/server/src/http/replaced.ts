import type { FastifyRequest } from 'fastify';
import { recordOutcome } from '../audit/http.js';
import type { ServerContext } from '../services.js';
import type { FileAccess } from '../files/access/access.js';
import type { FileEvents } from '../files/change/events.js';
import type { ReplaceStep } from '../files/change/replace.js';
import { replaceStep, type Replaced } from '../files/change/trash.js';
import { sharesFollowDelete } from '../shares/service.js';
import type { StoredUser } from '../store/users.js';
import { davFollowDelete } from './dav/follow.js';
import { notify } from './notify.js';

/**
 * The follow-ups of an entry an overwrite took away, as a DELETE has them: its share links and
 * WebDAV records go, listeners hear of it, and (with the request) it gets its own audit record,
 * `file.delete` with `why` in its detail.
 */
export function followReplaced(
  ctx: ServerContext,
  access: FileAccess,
  events: FileEvents,
  request: FastifyRequest | undefined,
  why: string,
): (replaced: Replaced) => Promise<void> {
  return async (replaced) => {
    if (request) {
      recordOutcome(ctx, request, 204, {
        action: 'file.delete',
        path: replaced.virtual,
        detail: `${replaced.trashed ? 'to trash' : 'permanent'}, ${why}`,
      });
    }
    await notify(ctx, 'delete', () => sharesFollowDelete(ctx, access, replaced.real));
    await notify(ctx, 'delete', async () => await davFollowDelete(ctx, access, replaced.real));
    await notify(ctx, 'delete', () => events.deleted?.(replaced.real));
  };
}

/** The replace step of a user's request (files/trash.ts), with the follow-ups of what it takes away. */
export function requestReplaceStep(
  ctx: ServerContext,
  user: StoredUser,
  access: FileAccess,
  events: FileEvents,
  request: FastifyRequest | undefined,
  why: string,
): ReplaceStep {
  return replaceStep(ctx, user, { onReplaced: followReplaced(ctx, access, events, request, why) });
}
