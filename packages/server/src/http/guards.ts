import { AUTH_COOKIE, RENEW_HEADER } from '@filebrowser/contract';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import type { ApiTokenGrant } from '../auth/api-tokens.js';
import { callerFrom, type Caller, type Credential } from '../auth/caller.js';
import { assertMay, may, type Operation } from '../auth/policy.js';
import type { Authenticated } from '../auth/service.js';
import { forbidden, unauthorized } from '../errors.js';
import { sendStatus } from './replies.js';
import type { StoredUser } from '../store/users.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user, set by requireUser/requireAdmin. */
    user?: StoredUser;
    /** Token claims and session of the signed-in user (not set for API tokens). */
    auth?: Authenticated;
    /** The personal API token a request came with (`Authorization: Bearer`). */
    apiToken?: ApiTokenGrant;
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

/** A personal API token from `Authorization: Bearer …`; other schemes are not this API's. */
export function bearerFrom(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : undefined;
  return match?.[1];
}

const RENEW_WITHIN_SECONDS = 3600;

/** Methods that change nothing: all a read-only API token may use. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The one place a request is authenticated: a personal API token when it brings one, else the
 * session token. With an API token, `request.user` is the user as the token lets them act (see
 * `AuthService.verifyApiToken`), so every route and file access below sees the cut permissions
 * and the token's folder without knowing about tokens.
 */
async function authenticate(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<StoredUser> {
  const bearer = bearerFrom(request);
  if (bearer !== undefined) {
    const grant = ctx.auth.verifyApiToken(bearer, request.ip);
    request.apiToken = grant;
    request.user = grant.user;
    return grant.user;
  }
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

/** What a route does, for the permission policy (auth/policy.ts). */
export interface RouteNeeds {
  /** The operation(s), or a function of the request naming them (undefined: none). */
  needs?: Operation | readonly Operation[] | ((request: FastifyRequest) => readonly Operation[] | undefined);
  /**
   * File Browser answers a missing download permission on raw, preview and subtitle requests with
   * 202 and no body (contract 1.5), not 403.
   */
  refuseWith202?: boolean;
  /**
   * Refuse personal API tokens: the route manages them (no token may mint or revoke tokens) or
   * acts on the session itself.
   */
  sessionOnly?: boolean;
}

/**
 * The guard of a signed-in route: authenticates the request, then checks the permissions the
 * route's operation needs before anything else (a body, a path) is looked at.
 */
export function requireUser(ctx: AppContext, route: RouteNeeds = {}): onRequestAsyncHookHandler {
  return async function requireUserHook(request, reply) {
    const user = await authenticate(ctx, request, reply);
    const grant = request.apiToken;
    if (grant && route.sessionOnly) {
      throw forbidden('API tokens cannot be used here; sign in with your password');
    }
    const { needs } = route;
    const ops = typeof needs === 'function' ? needs(request) : typeof needs === 'string' ? [needs] : needs;
    if (route.refuseWith202 && ops && !ops.every((op) => may(user.perm, op))) {
      if (grant?.token.readOnly && !SAFE_METHODS.has(request.method)) throw forbidden(grant.cut.reason);
      return sendStatus(reply, 202);
    }
    permit(user, grant, request.method, ops ?? []);
  };
}

/**
 * What a signed-in request may do once its user is known: the permissions its operations need,
 * with a token's cut. Made by the guard for every request, and again by callers of work that
 * outlives its request (`callerOf`).
 */
function permit(
  user: StoredUser,
  grant: ApiTokenGrant | undefined,
  method: string,
  ops: readonly Operation[],
): void {
  // The cut permissions already refuse every operation that writes; this also covers the
  // routes that declare none (a user's own account, deleting a link).
  if (grant?.token.readOnly && !SAFE_METHODS.has(method)) throw forbidden(grant.cut.reason);
  if (ops.length > 0) assertMay(user.perm, ops, grant?.cut);
}

/**
 * The caller of a request that passed `requireUser`, for work that outlives the request (jobs,
 * archive downloads, search streams): asked again between two items, it re-derives the user from
 * the request's session or API token and makes the guard's checks for `needs` (auth/caller.ts).
 * Checked once here, so that the scope and rules it holds to are the request's.
 */
export function callerOf(ctx: AppContext, request: FastifyRequest, needs: readonly Operation[] = []): Caller {
  const user = currentUser(request);
  const grant = request.apiToken;
  const credential: Credential = grant
    ? { kind: 'apiToken', tokenId: grant.token.id, userId: user.id }
    : { kind: 'session', sessionId: currentAuth(request).sessionId, userId: user.id };
  const caller = callerFrom(ctx, credential, (now, nowGrant) => permit(now, nowGrant, request.method, needs));
  caller.now();
  return caller;
}

export function requireAdmin(
  ctx: AppContext,
  route: Omit<RouteNeeds, 'needs'> = {},
): onRequestAsyncHookHandler {
  return requireUser(ctx, { ...route, needs: 'admin' });
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
