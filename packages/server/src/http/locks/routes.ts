import { Type } from '@sinclair/typebox';
import { DavLockInfo, DavLockParams } from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { audit } from '../../audit/http.js';
import type { AppContext } from '../../context.js';
import { notFound } from '../../errors.js';
import { breakLock, locksInForce } from '../../files/change/lock-list.js';
import { empty } from '../openapi/declare.js';
import { ACCOUNT_CHANGES } from '../reach.js';
import { sendStatus } from '../replies.js';

/**
 * `GET /api/dav/locks` and `DELETE /api/dav/locks/{token}`: administrators see every WebDAV
 * lock in force and break any of them (a client that left a lock behind, a lock in someone's way).
 */
export function lockRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/dav/locks',
      {
        config: { reach: ACCOUNT_CHANGES, needs: 'admin' },
        schema: {
          summary: 'every WebDAV lock in force, oldest first (administrators)',
          response: { 200: Type.Array(DavLockInfo) },
        },
      },
      async () => locksInForce(ctx, { sweep: true }),
    );

    app.delete(
      '/api/dav/locks/:token',
      {
        config: { reach: ACCOUNT_CHANGES, needs: 'admin', audit: 'lock.break' },
        schema: {
          summary: 'break a WebDAV lock (administrators)',
          params: DavLockParams,
          response: { 204: empty('broken') },
        },
      },
      async (request, reply) => {
        audit(request, { detail: request.params.token });
        const broken = await breakLock(ctx, request.params.token);
        if (!broken) throw notFound('no such lock: it may have ended or been broken already');
        audit(request, { path: broken.path, detail: `${request.params.token} held by ${broken.username}` });
        return sendStatus(reply, 204);
      },
    );
  };
}
