import { AUTH_COOKIE, RENEW_HEADER } from '@filebrowser/contract';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import type { Authenticated } from '../auth/service.js';
import { forbidden, unauthorized } from '../errors.js';
import type { StoredUser } from '../store/users.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user, set by requireUser/requireAdmin. */
    user?: StoredUser;
    /** Token claims and session of the signed-in user. */
    auth?: Authenticated;
  }
}

/** Tokens are read from X-Auth on any method, and from the `auth` cookie on GET only (contract 1.2). */
export function tokenFrom(request: FastifyRequest): string | undefined {
  const header = request.headers['x-auth'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value && value.split('.').length === 3) return value;
  if (request.method === 'GET' || request.method === 'HEAD') {
    const cookie = request.cookies?.[AUTH_COOKIE];
    if (cookie && cookie.split('.').length === 3) return cookie;
  }
  return undefined;
}

const RENEW_WITHIN_SECONDS = 3600;

async function authenticate(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<StoredUser> {
  const auth = await ctx.auth.verify(tokenFrom(request));
  request.auth = auth;
  request.user = auth.user;
  const now = Math.floor(Date.now() / 1000);
  // Ask the client to renew when the token is about to expire or the user changed after it was issued.
  if (auth.claims.exp - now < RENEW_WITHIN_SECONDS || auth.claims.iat * 1000 < auth.user.updatedAt - 999) {
    void reply.header(RENEW_HEADER, 'true');
  }
  return auth.user;
}

export function requireUser(ctx: AppContext): onRequestAsyncHookHandler {
  return async function requireUserHook(request, reply) {
    await authenticate(ctx, request, reply);
  };
}

export function requireAdmin(ctx: AppContext): onRequestAsyncHookHandler {
  return async function requireAdminHook(request, reply) {
    const user = await authenticate(ctx, request, reply);
    if (!user.perm.admin) throw forbidden();
  };
}

/** The signed-in user of a request that passed a guard. */
export function currentUser(request: FastifyRequest): StoredUser {
  if (!request.user) throw unauthorized();
  return request.user;
}

export function currentAuth(request: FastifyRequest): Authenticated {
  if (!request.auth) throw unauthorized();
  return request.auth;
}
