import { Type } from '@sinclair/typebox';
import { PathParams, Share, ShareRequest } from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { audit } from '../../audit/http.js';
import type { AppContext } from '../../context.js';
import { createShare, deleteShare, listShares, sharesOfPath } from '../../shares/service.js';
import { currentUser } from '../guards.js';
import { ACCOUNT_CHANGES } from '../reach.js';
import { lenientJson, statusLine } from '../openapi/declare.js';
import { sendStatus } from '../replies.js';

/** Share management for signed-in users (contract 8.1–8.4). */
export function shareRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  // A link hands its item to anyone holding it, beyond any one folder; the guard checks share
  // (and download) first, so a refusal an API token caused names the token.
  const sharing = { reach: ACCOUNT_CHANGES, needs: 'share' } as const;
  return async (app) => {
    app.get(
      '/api/shares',
      {
        config: sharing,
        schema: {
          summary: 'the caller’s share links (everyone’s for administrators)',
          response: { 200: Type.Array(Share) },
        },
      },
      async (request) => await listShares(ctx, currentUser(request)),
    );

    app.get(
      '/api/share/*',
      {
        config: sharing,
        schema: {
          summary: 'the caller’s share links of one item',
          params: PathParams,
          response: { 200: Type.Array(Share) },
        },
      },
      async (request) => sharesOfPath(ctx, currentUser(request), '/' + request.params['*']),
    );

    app.post(
      '/api/share/*',
      {
        config: {
          ...sharing,
          audit: (request) => ({
            action: 'share.create',
            path: '/' + (request.params as { '*': string })['*'],
          }),
        },
        schema: {
          summary: 'make a share link of an item',
          params: PathParams,
          readBody: lenientJson('required; `expires` may be a string or a number', ShareRequest),
          response: { 200: Share },
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
        config: {
          ...sharing,
          audit: (request) => ({ action: 'share.delete', detail: (request.params as { '*': string })['*'] }),
        },
        schema: {
          summary: 'delete a share link, by its hash',
          params: PathParams,
          response: { 200: statusLine('deleted') },
        },
      },
      async (request, reply) => {
        const hash = request.params['*'].replace(/\/+$/, '');
        audit(request, { detail: hash });
        await deleteShare(ctx, currentUser(request), hash);
        return sendStatus(reply, 200);
      },
    );
  };
}
