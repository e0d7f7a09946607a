import { Type } from '@sinclair/typebox';
import {
  ApiToken,
  ApiTokenParams,
  ApiTokenRequest,
  NewApiToken,
  NumericIdParams,
} from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { audit } from '../../audit/http.js';
import { createApiToken, listApiTokens, revokeApiToken } from '../../auth/api-tokens.js';
import { may } from '../../auth/policy.js';
import type { ServerContext } from '../../services.js';
import { notFound } from '../../errors.js';
import { currentUser } from '../guards.js';
import { SESSION_ONLY } from '../reach.js';
import { statusLine } from '../openapi/declare.js';
import { sendStatus } from '../replies.js';

/**
 * Personal API tokens. Every route here is for signed-in sessions only: no token can
 * make, list or revoke tokens, so a leaked token cannot entrench itself.
 */
export function tokenRoutes(ctx: ServerContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/tokens',
      {
        config: { reach: SESSION_ONLY },
        schema: { summary: 'the caller’s API tokens', response: { 200: Type.Array(ApiToken) } },
      },
      async (request) => listApiTokens(ctx, currentUser(request)),
    );

    app.post(
      '/api/tokens',
      {
        config: { reach: SESSION_ONLY, audit: 'token.create' },
        schema: {
          summary: 'make an API token; the answer holds its secret, this once',
          body: ApiTokenRequest,
          response: { 201: NewApiToken },
        },
      },
      async (request, reply) => {
        const caller = currentUser(request);
        const { current_password, ...wanted } = request.body;
        // A stolen session must not turn into a credential that outlives it.
        await ctx.auth.confirmPassword(caller, current_password, request.ip);
        audit(request, { detail: wanted.name });
        const created = await createApiToken(ctx, caller, wanted);
        audit(request, { detail: `${created.id} ${created.name}` });
        return reply.code(201).send(created);
      },
    );

    // The owner revokes their own; an administrator anyone's. Someone else's token is "not found".
    app.delete(
      '/api/tokens/:id',
      {
        config: { reach: SESSION_ONLY, audit: 'token.revoke' },
        schema: {
          summary: 'revoke an API token',
          params: ApiTokenParams,
          response: { 200: statusLine('revoked') },
        },
      },
      async (request, reply) => {
        const caller = currentUser(request);
        audit(request, { detail: request.params.id });
        const token = await ctx.store.apiTokens.get(request.params.id);
        if (!token || (token.userId !== caller.id && !may(caller.perm, 'admin'))) throw notFound();
        const owner = await ctx.store.users.get(token.userId);
        if (!owner) throw notFound();
        audit(request, { detail: `${token.id} ${token.name} of ${owner.username}` });
        await revokeApiToken(ctx, owner, token.id);
        return sendStatus(reply, 200);
      },
    );

    app.get(
      '/api/users/:id(^\\d+$)/tokens',
      {
        config: { reach: SESSION_ONLY, needs: 'admin' },
        schema: {
          summary: 'a user’s API tokens (administrators)',
          params: NumericIdParams,
          response: { 200: Type.Array(ApiToken) },
        },
      },
      async (request) => {
        const user = await ctx.store.users.get(Number(request.params.id));
        if (!user) throw notFound();
        return listApiTokens(ctx, user);
      },
    );
  };
}
