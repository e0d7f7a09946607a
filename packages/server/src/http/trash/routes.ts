import { periodically } from '../periodic.js';
import { Type } from '@sinclair/typebox';
import {
  TrashItem,
  TrashItemParams,
  TrashListQuery,
  TrashRestoreQuery,
  TrashRestoreResult,
} from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { may, type Operation } from '../../auth/policy.js';
import { audit } from '../../audit/http.js';
import type { ServerContext } from '../../services.js';
import { forbidden, notFound } from '../../errors.js';
import { fileAccessFor } from '../../files/access/access.js';
import type { FileEvents } from '../../files/change/events.js';
import {
  deleteItemForever,
  emptyTrash,
  ownItem,
  presentItem,
  purgeExpired,
  reachableItems,
  restoreItem,
} from '../../files/change/trash.js';
import { callerOf, currentUser } from '../guards.js';
import { FILE_CHANGES, FILES } from '../reach.js';
import { followReplaced } from '../replaced.js';
import { empty } from '../openapi/declare.js';
import { sendStatus } from '../replies.js';

/** Purges expired items at least this often (and at start: the server may have been down). */
const PURGE_EVERY_MS = 3600_000;

const isTrue = (v: string | undefined) => v === 'true';

/**
 * `/api/trash`: a user's own trash. Another user's item is "not found", whoever asks;
 * an administrator may list anyone's trash (`?user=id`) but acts only on their own.
 */
export function trashRoutes(ctx: ServerContext, events: FileEvents = {}): FastifyPluginAsyncTypebox {
  const restoreNeeds = (request: FastifyRequest): readonly Operation[] =>
    isTrue((request.query as Record<string, string | undefined>).override)
      ? ['restore', 'modify']
      : ['restore'];

  return async (app) => {
    periodically(
      app,
      ctx,
      { name: 'trash-purge', everyMs: PURGE_EVERY_MS, failure: 'trash purge failed' },
      () => purgeExpired(ctx),
    );

    app.get(
      '/api/trash',
      {
        config: { reach: FILES },
        schema: {
          summary: 'the items of a trash: the caller’s, or (administrators) a user’s',
          querystring: TrashListQuery,
          response: { 200: Type.Array(TrashItem) },
        },
      },
      async (request) => {
        const caller = currentUser(request);
        let userId = caller.id;
        if (request.query.user !== undefined && Number(request.query.user) !== caller.id) {
          if (!may(caller.perm, 'admin'))
            throw forbidden('only an administrator may list another user’s trash');
          userId = Number(request.query.user);
          if (!(await ctx.store.users.get(userId)) && (await ctx.store.trash.list(userId)).length === 0)
            throw notFound();
        }
        if (userId !== caller.id)
          return (await ctx.store.trash.list(userId)).map((item) => presentItem(ctx, item));
        return (await reachableItems(ctx, caller)).map((r) => presentItem(ctx, r.item, r.path));
      },
    );

    app.post(
      '/api/trash/:id/restore',
      {
        config: { reach: FILE_CHANGES, needs: restoreNeeds, audit: 'trash.restore' },
        schema: {
          summary: 'put an item back where it was',
          params: TrashItemParams,
          querystring: TrashRestoreQuery,
          response: { 200: TrashRestoreResult },
        },
      },
      async (request) => {
        const user = currentUser(request);
        audit(request, { detail: request.params.id });
        const item = await ownItem(ctx, user, request.params.id);
        audit(request, { path: item.path });
        const access = await fileAccessFor(ctx, user);
        const restored = await restoreItem(ctx, access, user, item, {
          rename: isTrue(request.query.rename),
          override: isTrue(request.query.override),
          // The replaced entry is deleted as a DELETE deletes: its own record, its links gone.
          onReplaced: followReplaced(ctx, access, events, request, 'replaced by a restore'),
          // A restore across file systems is a copy, which can outlast its token or session.
          stillAllowed: async () => await callerOf(ctx, request, ['restore']),
        });
        try {
          await events.changed?.(restored.real);
        } catch (err) {
          ctx.log.warn({ err }, 'after restore: listener failed');
        }
        const { real: _real, ...answer } = restored;
        audit(request, { destination: answer.path });
        return answer;
      },
    );

    app.delete(
      '/api/trash/:id',
      {
        config: { reach: FILE_CHANGES, needs: 'delete', audit: 'trash.purge' },
        schema: {
          summary: 'delete an item of the trash forever',
          params: TrashItemParams,
          response: { 204: empty('deleted') },
        },
      },
      async (request, reply) => {
        audit(request, { detail: request.params.id });
        const item = await ownItem(ctx, currentUser(request), request.params.id);
        audit(request, { path: item.path });
        await deleteItemForever(ctx, item);
        return sendStatus(reply, 204);
      },
    );

    app.delete(
      '/api/trash',
      {
        config: { reach: FILE_CHANGES, needs: 'delete', audit: 'trash.purge' },
        schema: { summary: 'empty the caller’s trash', response: { 204: empty('emptied') } },
      },
      async (request, reply) => {
        const emptied = await emptyTrash(ctx, currentUser(request));
        audit(request, { detail: `emptied: ${emptied} items` });
        return sendStatus(reply, 204);
      },
    );
  };
}
