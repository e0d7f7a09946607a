import { Type } from '@sinclair/typebox';
import { ApiToken, ApiTokenRequest, NewApiToken } from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { audit } from '../../audit/http.js';
import { createApiToken, listApiTokens, revokeApiToken } from '../../auth/api-tokens.js';
import { checkPassword } from '../../auth/passwords.js';
import { may } from '../../auth/policy.js';
import type { AppContext } from '../../context.js';
import { badRequest, notFound } from '../../errors.js';
import { currentUser, requireAdmin, requireUser } from '../guards.js';
import { sendStatus } from '../replies.js';

const TokenParams = Type.Object({ id: Type.String() });
const UserParams = Type.Object({ id: Type.String({ pattern: '^[0-9]+$' }) });

/**
 * Personal API tokens (issue 17). Every route here is for signed-in sessions only: no token can
 * make, list or revoke tokens, so a leaked token cannot entrench itself.
 */
export function tokenRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const session = requireUser(ctx, { sessionOnly: true });

  return async (app) => {
    app.get(
      '/api/tokens',
      { onRequest: session, schema: { response: { 200: Type.Array(ApiToken) } } },
      async (request) => listApiTokens(ctx, currentUser(request)),
    );

    app.post(
      '/api/tokens',
      {
        onRequest: session,
        schema: { body: ApiTokenRequest, response: { 201: NewApiToken } },
        config: { audit: 'token.create' },
      },
      async (request, reply) => {
        const caller = currentUser(request);
        const { current_password, ...wanted } = request.body;
        // A stolen session must not turn into a credential that outlives it.
        if (ctx.store.settings.get().authMethod === 'json') {
          if (!current_password || !(await checkPassword(current_password, caller.passwordHash))) {
            throw badRequest('the current password is incorrect');
          }
        }
        audit(request, { detail: wanted.name });
        const created = await createApiToken(ctx, caller, wanted);
        audit(request, { detail: `${created.id} ${created.name}` });
        return reply.code(201).send(created);
      },
    );

    // The owner revokes their own; an administrator anyone's. Someone else's token is "not found".
    app.delete(
      '/api/tokens/:id',
      { onRequest: session, schema: { params: TokenParams }, config: { audit: 'token.revoke' } },
      async (request, reply) => {
        const caller = currentUser(request);
        audit(request, { detail: request.params.id });
        const token = ctx.store.apiTokens.get(request.params.id);
        if (!token || (token.userId !== caller.id && !may(caller.perm, 'admin'))) throw notFound();
        const owner = ctx.store.users.get(token.userId);
        if (!owner) throw notFound();
        audit(request, { detail: `${token.id} ${token.name} of ${owner.username}` });
        revokeApiToken(ctx, owner, token.id);
        return sendStatus(reply, 200);
      },
    );

    app.get(
      '/api/users/:id(^\\d+$)/tokens',
      {
        onRequest: requireAdmin(ctx, { sessionOnly: true }),
        schema: { params: UserParams, response: { 200: Type.Array(ApiToken) } },
      },
      async (request) => {
        const user = ctx.store.users.get(Number(request.params.id));
        if (!user) throw notFound();
        return listApiTokens(ctx, user);
      },
    );
  };
}
