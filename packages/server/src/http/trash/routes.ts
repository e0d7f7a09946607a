import { Type } from '@sinclair/typebox';
import { TrashItem, TrashRestoreResult } from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { may, type Operation } from '../../auth/policy.js';
import { audit } from '../../audit/http.js';
import type { AppContext } from '../../context.js';
import { forbidden, notFound } from '../../errors.js';
import { fileAccessFor } from '../../files/access.js';
import type { FileEvents } from '../../files/events.js';
import {
  deleteItemForever,
  emptyTrash,
  ownItem,
  presentItem,
  purgeExpired,
  restoreItem,
} from '../../files/trash.js';
import { currentUser, requireUser } from '../guards.js';
import { sendStatus } from '../replies.js';

const ItemParams = Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{1,64}$' }) });
const ListQuery = Type.Object({ user: Type.Optional(Type.String({ pattern: '^[0-9]+$' })) });
const RestoreQuery = Type.Object({
  rename: Type.Optional(Type.String()),
  override: Type.Optional(Type.String()),
});

/** Purges expired items at least this often (and at start: the server may have been down). */
const PURGE_EVERY_MS = 3600_000;

const isTrue = (v: string | undefined) => v === 'true';

/**
 * `/api/trash` (issue 18): a user's own trash. Another user's item is "not found", whoever asks;
 * an administrator may list anyone's trash (`?user=id`) but acts only on their own.
 */
export function trashRoutes(ctx: AppContext, events: FileEvents = {}): FastifyPluginAsyncTypebox {
  const restoreNeeds = (request: FastifyRequest): readonly Operation[] =>
    isTrue((request.query as Record<string, string | undefined>).override)
      ? ['restore', 'modify']
      : ['restore'];

  return async (app) => {
    let timer: NodeJS.Timeout | undefined;
    const purge = () =>
      purgeExpired(ctx).catch((err: unknown) => ctx.log.warn({ err }, 'trash purge failed'));
    app.addHook('onReady', async () => {
      await purge();
      timer = setInterval(() => void purge(), PURGE_EVERY_MS);
      timer.unref();
    });
    app.addHook('onClose', async () => clearInterval(timer));

    app.get(
      '/api/trash',
      {
        onRequest: requireUser(ctx),
        schema: { querystring: ListQuery, response: { 200: Type.Array(TrashItem) } },
      },
      async (request) => {
        const caller = currentUser(request);
        let userId = caller.id;
        if (request.query.user !== undefined && Number(request.query.user) !== caller.id) {
          if (!may(caller.perm, 'admin'))
            throw forbidden('only an administrator may list another user’s trash');
          userId = Number(request.query.user);
          if (!ctx.store.users.get(userId) && ctx.store.trash.list(userId).length === 0) throw notFound();
        }
        return ctx.store.trash.list(userId).map((item) => presentItem(ctx, item));
      },
    );

    app.post(
      '/api/trash/:id/restore',
      {
        onRequest: requireUser(ctx, { needs: restoreNeeds }),
        config: { audit: 'trash.restore' },
        schema: { params: ItemParams, querystring: RestoreQuery, response: { 200: TrashRestoreResult } },
      },
      async (request) => {
        const user = currentUser(request);
        audit(request, { detail: request.params.id });
        const item = ownItem(ctx, user, request.params.id);
        audit(request, { path: item.path });
        const access = await fileAccessFor(ctx, user);
        const restored = await restoreItem(ctx, access, item, {
          rename: isTrue(request.query.rename),
          override: isTrue(request.query.override),
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
        onRequest: requireUser(ctx, { needs: 'delete' }),
        schema: { params: ItemParams },
        config: { audit: 'trash.purge' },
      },
      async (request, reply) => {
        audit(request, { detail: request.params.id });
        const item = ownItem(ctx, currentUser(request), request.params.id);
        audit(request, { path: item.path });
        await deleteItemForever(ctx, item);
        return sendStatus(reply, 204);
      },
    );

    app.delete(
      '/api/trash',
      { onRequest: requireUser(ctx, { needs: 'delete' }), config: { audit: 'trash.purge' } },
      async (request, reply) => {
        const emptied = await emptyTrash(ctx, currentUser(request));
        audit(request, { detail: `emptied: ${emptied} items` });
        return sendStatus(reply, 204);
      },
    );
  };
}
