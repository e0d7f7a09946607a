import { Type } from '@sinclair/typebox';
import { audit } from '../../audit/http.js';
import { may } from '../../auth/policy.js';
import { NumericIdParams, User, UserDeleteRequest, UserRequest } from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createAccount, deleteAccount, SENSITIVE_FIELDS, updateAccount } from '../../auth/accounts.js';
import { emptyTrash } from '../../files/change/trash.js';
import type { ServerContext } from '../../services.js';
import { badRequest, forbidden, notFound } from '../../errors.js';
import type { StoredUser } from '../../store/users.js';
import { currentUser } from '../guards.js';
import { ACCOUNT, ACCOUNT_CHANGES } from '../reach.js';
import { lenientJson, statusLine } from '../openapi/declare.js';
import { sendStatus } from '../replies.js';
import { presentUser } from './present.js';

/** Only digits make a user id: anything else is not this route (contract 11.2), so it answers 404. */
const BY_ID = '/api/users/:id(^\\d+$)';

export function usersRoutes(ctx: ServerContext): FastifyPluginAsyncTypebox {
  async function target(id: string, caller: StoredUser): Promise<StoredUser> {
    const n = Number(id);
    if (n !== caller.id && !may(caller.perm, 'admin')) throw forbidden();
    const user = await ctx.store.users.get(n);
    if (!user) throw notFound();
    return user;
  }

  return async (app) => {
    app.get(
      '/api/users',
      {
        config: { reach: ACCOUNT_CHANGES, needs: 'admin' },
        schema: { summary: 'every user (administrators)', response: { 200: Type.Array(User) } },
      },
      async () => (await ctx.store.users.list()).map((u) => presentUser(u, true)),
    );

    app.get(
      BY_ID,
      {
        config: { reach: ACCOUNT },
        schema: {
          summary: 'a user: oneself, or anyone for administrators',
          params: NumericIdParams,
          response: { 200: User },
        },
      },
      async (request) => {
        const caller = currentUser(request);
        return presentUser(await target(request.params.id, caller), may(caller.perm, 'admin'));
      },
    );

    app.post(
      '/api/users',
      {
        config: { reach: ACCOUNT_CHANGES, needs: 'admin', audit: 'user.create' },
        schema: {
          summary: 'make a user (administrators)',
          body: UserRequest,
          response: { 201: statusLine('made; Location names the new user') },
        },
      },
      async (request, reply) => {
        const { what, which, current_password, data } = request.body;
        if (what !== 'user') throw badRequest('what must be "user"');
        if (which && which.length > 0) throw badRequest('which must be empty when creating a user');
        await ctx.auth.confirmPassword(currentUser(request), current_password, request.ip);
        if (!data.password) throw badRequest('password is required');
        const scope = data.scope?.trim();
        audit(request, { detail: `user ${data.username ?? ''}` });
        const user = await createAccount(ctx, { ...data, scope }, data.password, 'admin', {
          createHome: !scope && ctx.store.settings.get().createUserDir,
        });
        audit(request, { detail: `user ${user.username} (id ${user.id})` });
        return sendStatus(reply.header('Location', `/settings/users/${user.id}`), 201);
      },
    );

    app.put(
      BY_ID,
      {
        config: { reach: ACCOUNT_CHANGES, audit: 'user.update' },
        schema: {
          summary: 'change the fields `which` of a user (all of them when empty)',
          params: NumericIdParams,
          body: UserRequest,
          response: { 200: statusLine('changed') },
        },
      },
      async (request, reply) => {
        const caller = currentUser(request);
        const { what, which = [], current_password, data } = request.body;
        if (what !== 'user') throw badRequest('what must be "user"');
        const user = await target(request.params.id, caller);
        audit(request, { detail: `user ${user.username} (id ${user.id}): ${which.join(', ') || 'all'}` });
        const fields = which.map((w) => w.toLowerCase());
        const wholeRecord = fields.length === 0;
        if (wholeRecord || fields.some((f) => SENSITIVE_FIELDS.includes(f))) {
          await ctx.auth.confirmPassword(caller, current_password, request.ip);
        }
        if (data.id !== undefined && data.id !== user.id)
          throw badRequest('the user id does not match the URL');
        const { user: saved, revokeSessions } = await updateAccount(ctx, caller, user, which, data);
        if (revokeSessions) {
          // Whoever made the change keeps the session they made it from; every other one ends.
          await ctx.store.sessions.revokeUser(
            saved.id,
            saved.id === caller.id ? request.auth?.sessionId : undefined,
          );
        }
        return sendStatus(reply, 200);
      },
    );

    app.delete(
      BY_ID,
      {
        config: { reach: ACCOUNT_CHANGES, audit: 'user.delete' },
        schema: {
          summary: 'delete a user, with their trash',
          params: NumericIdParams,
          readBody: lenientJson('required, even empty ({})', UserDeleteRequest),
          response: { 200: statusLine('deleted') },
        },
      },
      async (request, reply) => {
        const caller = currentUser(request);
        const user = await target(request.params.id, caller);
        audit(request, { detail: `user ${user.username} (id ${user.id})` });
        const body = request.body as UserDeleteRequest | undefined;
        if (!body || typeof body !== 'object') throw badRequest('a JSON body is required');
        await ctx.auth.confirmPassword(caller, body.current_password, request.ip);
        await deleteAccount(ctx, user.id);
        // Their trash goes with them (the retention purge catches what this misses, or the CLI's).
        await emptyTrash(ctx, user).catch((err: unknown) =>
          ctx.log.warn({ err, user: user.id }, 'the trash of a deleted user could not be emptied'),
        );
        return sendStatus(reply, 200);
      },
    );
  };
}
