import { AUTH_COOKIE, RENEW_HEADER } from '@filebrowser/contract';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import type { ServerContext } from '../services.js';
import { apiTokenLabel, type ApiTokenGrant } from '../auth/api-tokens.js';
import { callerFrom, type Caller, type Credential } from '../auth/caller.js';
import { credentialRefused } from '../audit/http.js';
import {
  assertMay,
  checkReach,
  may,
  routeKind,
  tokenRefusal,
  type Operation,
  type RouteReach,
} from '../auth/policy.js';
import type { Authenticated } from '../auth/service.js';
import { AppError, forbidden, unauthorized } from '../errors.js';
import { davUser } from './dav/auth.js';
import { sendStatus } from './replies.js';
import type { Confinement } from '../files/access/access.js';
import type { StoredUser } from '../store/users.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The signed-in user, set by the route's guard: as the request may act (a token's cuts and
     * folder applied). Give this to `fileAccessFor`.
     */
    user?: StoredUser & Confinement;
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

/**
 * The one place a request is authenticated: a personal API token when it brings one, else the
 * session token. With an API token, `request.user` is the user as the token lets them act (see
 * `AuthService.verifyApiToken`), so every route and file access below sees the cut permissions
 * and the token's folder without knowing about tokens.
 */
async function authenticate(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<StoredUser> {
  const bearer = bearerFrom(request);
  if (bearer !== undefined) {
    let grant: ApiTokenGrant;
    try {
      grant = await ctx.auth.verifyApiToken(bearer, request.ip);
    } catch (err) {
      if (err instanceof AppError && (err.kind === 'unauthorized' || err.kind === 'too_many_requests')) {
        const token = apiTokenLabel(bearer);
        credentialRefused(ctx, request, {
          username: token.name,
          status: err.status,
          via: token.id ? `API token ${token.id}` : 'API token',
        });
      }
      throw err;
    }
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

/** What a route declares in its config: who reaches it, and what its operation needs. */
export interface RouteDeclaration {
  /**
   * What each kind of caller reaches (auth/policy.ts `RouteReach`; the usual ones are in
   * http/reach.ts). Every route has one: registering a route without it fails at start-up.
   */
  reach?: RouteReach;
  /** The operation(s), or a function of the request naming them (undefined: none). */
  needs?: Operation | readonly Operation[] | ((request: FastifyRequest) => readonly Operation[] | undefined);
  /**
   * File Browser answers a missing download permission on raw, preview and subtitle requests with
   * 202 and no body (contract 1.5), not 403.
   */
  refuseWith202?: boolean;
  /** How callers sign in: the API's X-Auth, cookie or Bearer token (default), or WebDAV's Basic. */
  credentials?: 'api' | 'webdav';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What each kind of caller reaches through the route (see `RouteDeclaration`). */
    reach?: RouteReach;
    needs?: RouteDeclaration['needs'];
    refuseWith202?: boolean;
    credentials?: RouteDeclaration['credentials'];
  }
}

/** Why a token is refused, as its refusal tells it. */
function tokenRefusalMessage(grant: ApiTokenGrant, why: 'no tokens' | 'read-only' | 'folder'): string {
  if (why === 'no tokens') return 'API tokens cannot be used here; sign in with your password';
  const what = why === 'read-only' ? 'is read-only' : 'is limited to one folder';
  return `the API token “${grant.token.name}” ${what}`;
}

/**
 * The guard of a route, made from its declaration: nothing for open and share-link routes (they
 * read no account credential), else authentication, then the refusals the declared reach makes
 * for the kind of caller (a token the route refuses is 403, naming it), then the permissions the
 * route's operation needs, before anything else (a body, a path) is looked at.
 */
function guardFor(ctx: ServerContext, route: RouteDeclaration & { reach: RouteReach }) {
  if (routeKind(route.reach) !== 'signed in') return undefined;
  const { reach, needs } = route;
  const guard: onRequestAsyncHookHandler = async function guard(request, reply) {
    const user =
      route.credentials === 'webdav'
        ? await davAuthenticate(ctx, request)
        : await authenticate(ctx, request, reply);
    const grant = request.apiToken;
    if (grant) {
      const why = tokenRefusal(
        { readOnly: grant.token.readOnly, folder: grant.user.confinedTo !== undefined },
        reach,
        request.method,
      );
      if (why) throw forbidden(tokenRefusalMessage(grant, why));
    }
    const ops = typeof needs === 'function' ? needs(request) : typeof needs === 'string' ? [needs] : needs;
    if (route.refuseWith202 && ops && !ops.every((op) => may(user.perm, op))) {
      return sendStatus(reply, 202);
    }
    permit(user, grant, ops ?? []);
  };
  return guard;
}

/** The user of a WebDAV request (Basic credentials, or the server's other sign-in methods). */
async function davAuthenticate(ctx: ServerContext, request: FastifyRequest): Promise<StoredUser> {
  const user = await davUser(ctx, request);
  request.user = user;
  return user;
}

/** Guards already installed, so that a route's options seen twice get one guard. */
const GUARDS = new WeakSet<object>();

/**
 * Called for every route as it is registered (an `onRoute` hook of the app): refuses a route
 * without a valid declaration of its reach, so that the server does not start with one, and puts
 * the guard made from the declaration first among the route's `onRequest` hooks. Routes never
 * install a guard themselves: the declaration is the only way to have one.
 */
export function guardRoute(ctx: ServerContext, route: RouteOptions): void {
  const config = (route.config ?? {}) as RouteDeclaration;
  const methods = [route.method].flat();
  const needs =
    typeof config.needs === 'string' ? [config.needs] : Array.isArray(config.needs) ? config.needs : [];
  const wrong = checkReach(config.reach, methods, needs as readonly Operation[]);
  if (wrong) throw new Error(`the route ${methods.join(',')} ${route.url} cannot be served: ${wrong}`);
  const existing = [route.onRequest ?? []].flat();
  if (existing.some((hook) => GUARDS.has(hook))) return;
  const guard = guardFor(ctx, { ...config, reach: config.reach! });
  if (!guard) return;
  GUARDS.add(guard);
  route.onRequest = [guard, ...existing];
}

/**
 * What a signed-in request may do once its user is known: the permissions its operations need,
 * with a token's cut. Made by the guard for every request, and again by callers of work that
 * outlives its request (`callerOf`).
 */
function permit(user: StoredUser, grant: ApiTokenGrant | undefined, ops: readonly Operation[]): void {
  // What a kind of token may reach at all is the route's declared reach (`tokenRefusal`, made
  // before this by the guard; a token's kind never changes): here, what the operation needs.
  if (ops.length > 0) assertMay(user.perm, ops, grant?.cut);
}

/**
 * The caller of a request that passed its route's guard, for work that outlives the request (jobs,
 * archive downloads, search streams): asked again between two items, it re-derives the user from
 * the request's session or API token and makes the guard's checks for `needs` (auth/caller.ts).
 * Checked once here, so that the scope and rules it holds to are the request's.
 */
export async function callerOf(
  ctx: ServerContext,
  request: FastifyRequest,
  needs: readonly Operation[] = [],
): Promise<Caller> {
  const user = currentUser(request);
  const grant = request.apiToken;
  const credential: Credential = grant
    ? { kind: 'apiToken', tokenId: grant.token.id, userId: user.id, confinedTo: user.confinedTo }
    : request.auth
      ? { kind: 'session', sessionId: request.auth.sessionId, userId: user.id }
      : { kind: 'account', userId: user.id, updatedAt: user.updatedAt };
  const caller = callerFrom(ctx, credential, (now, nowGrant) => permit(now, nowGrant, needs));
  await caller.now();
  return caller;
}

/** The signed-in user of a request that passed a guard. */
export function currentUser(request: FastifyRequest): StoredUser & Confinement {
  if (!request.user) throw unauthorized();
  return request.user;
}

export function currentAuth(request: FastifyRequest): Authenticated {
  if (!request.auth) throw unauthorized();
  return request.auth;
}
