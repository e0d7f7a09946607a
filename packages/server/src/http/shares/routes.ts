import { Type } from '@sinclair/typebox';
import { Share } from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { audit } from '../../audit/http.js';
import type { AppContext } from '../../context.js';
import { createShare, deleteShare, listShares, sharesOfPath } from '../../shares/service.js';
import { currentUser, requireUser } from '../guards.js';
import { sendStatus } from '../replies.js';

const Wildcard = Type.Object({ '*': Type.String() });

/** Share management for signed-in users (contract 8.1–8.4). */
export function shareRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  // Declared at the guard too, so a refusal an API token caused names the token.
  const sharing = requireUser(ctx, { needs: 'share' });
  return async (app) => {
    app.get(
      '/api/shares',
      { onRequest: sharing, schema: { response: { 200: Type.Array(Share) } } },
      async (request) => listShares(ctx, currentUser(request)),
    );

    app.get(
      '/api/share/*',
      { onRequest: sharing, schema: { params: Wildcard, response: { 200: Type.Array(Share) } } },
      async (request) => sharesOfPath(ctx, currentUser(request), '/' + request.params['*']),
    );

    app.post(
      '/api/share/*',
      {
        onRequest: sharing,
        schema: { params: Wildcard, response: { 200: Share } },
        config: {
          audit: (request) => ({
            action: 'share.create',
            path: '/' + (request.params as { '*': string })['*'],
          }),
        },
      },
      async (request) => {
        const body = request.body as Record<string, unknown> | undefined;
        const text = (v: unknown) =>
          typeof v === 'number' ? String(v) : typeof v === 'string' ? v : undefined;
        const share = await createShare(
          ctx,
          currentUser(request),
          '/' + request.params['*'],
          body && typeof body === 'object'
            ? { password: text(body.password), expires: text(body.expires), unit: text(body.unit) }
            : undefined,
        );
        audit(request, { detail: share.hash });
        return share;
      },
    );

    app.delete(
      '/api/share/*',
      {
        onRequest: sharing,
        schema: { params: Wildcard },
        config: {
          audit: (request) => ({ action: 'share.delete', detail: (request.params as { '*': string })['*'] }),
        },
      },
      async (request, reply) => {
        const hash = request.params['*'].replace(/\/+$/, '');
        audit(request, { detail: hash });
        deleteShare(ctx, currentUser(request), hash);
        return sendStatus(reply, 200);
      },
    );
  };
}
