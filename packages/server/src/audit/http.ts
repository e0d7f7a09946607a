import { nameTried } from '../auth/api-tokens.js';
import { periodically } from '../http/periodic.js';
import type { AuditAction } from '@filebrowser/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerContext } from '../services.js';
import { logFailedLogin } from '../http/access-log.js';
import { pathOnly } from '../logging.js';
import { joinScopePath } from '../store/db.js';
import { purgeExpiredAudit } from './retention.js';
import { TokenUseThrottle } from './token-use.js';

/** Expired records are purged at least this often (and at start: the server may have been down). */
const PURGE_EVERY_MS = 3600_000;

/** What one request's record says beyond who, where from, when and with what status. */
export interface AuditDraft {
  action: AuditAction;
  /** The path acted on, as the user sees it. */
  path?: string;
  /** Where a copy, rename or move went. */
  destination?: string;
  detail?: string;
  /** Who acted when nobody is signed in (the name a sign-in was tried with). */
  username?: string;
  userId?: number;
}

/**
 * What a route declares in its config: the action its requests record, or a function of the
 * request naming it (undefined: this request records nothing, e.g. a WebDAV read); `false` for a
 * route that changes nothing worth a record (a redirect, a health check), said explicitly so that
 * the route-index test can require a declaration of every route that takes a body.
 */
export type AuditDeclaration =
  | false
  | AuditAction
  | ((request: FastifyRequest, reply: FastifyReply) => AuditAction | AuditDraft | undefined);

/** What a handler adds to its request's record; `skip` when this request turned out to change nothing. */
export type AuditNote = Partial<AuditDraft> & { skip?: boolean };

declare module 'fastify' {
  interface FastifyContextConfig {
    audit?: AuditDeclaration;
  }
  interface FastifyRequest {
    auditNote?: AuditNote;
  }
  interface FastifyInstance {
    /** For routes that hijack their reply (see recordBeforeHijack). */
    auditContext: ServerContext;
  }
}

/**
 * Adds what only the handler knows (a token's id, the name a sign-in was tried with, where a
 * rename really went) to the record the request makes when it is answered.
 */
export function audit(request: FastifyRequest, note: AuditNote): void {
  request.auditNote = { ...request.auditNote, ...note };
}

/**
 * The one place requests become audit records: when a route that declares an action answers,
 * its record is queued with the answer's status (errors included). Routes that take the socket
 * over (the command WebSocket) call `recordRequest` themselves, as onSend does not run for them.
 */
export function installAudit(app: FastifyInstance, ctx: ServerContext): void {
  const tokenUses = new TokenUseThrottle();
  app.decorate('auditContext', ctx);
  app.addHook('onSend', async (request, reply, payload) => {
    recordRequest(ctx, request, reply);
    const grant = request.apiToken;
    if (grant && tokenUses.due(grant.token.id)) {
      ctx.audit.record({
        ...who(request),
        time: Date.now(),
        action: 'token.use',
        path: pathOnly(request.url),
        destination: '',
        status: reply.statusCode,
        detail: `${grant.token.id} ${grant.token.name}`,
      });
    }
    return payload;
  });
  periodically(
    app,
    ctx,
    { name: 'audit-purge', everyMs: PURGE_EVERY_MS, failure: 'audit purge failed' },
    () => purgeExpiredAudit(ctx),
  );
  app.addHook('onClose', async () => {
    await ctx.audit.close();
  });
}

/**
 * Queues the record of a request whose route declares an action, unless the handler skipped it.
 * A request to a route that takes an account, answered before anyone signed in (refused by its
 * guard), records nothing: without a credential it is no sign-in attempt, and with one its refusal
 * was recorded where the credential was refused (`credentialRefused`). So a flood of requests
 * nobody signed in for writes nothing but sign-in attempts, and those throttled (audit/log.ts).
 */
export function recordRequest(ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): void {
  const { audit: declared, reach } = request.routeOptions.config;
  const noted = request.auditNote ?? {};
  if (!declared || noted.skip) return;
  if (!request.user && reach?.anonymous === 'refused' && reach.session === 'account') return;
  let draft: AuditDraft | undefined;
  try {
    const value = typeof declared === 'function' ? declared(request, reply) : declared;
    draft = typeof value === 'string' ? { action: value } : value;
  } catch (err) {
    ctx.log.warn({ err }, 'audit: the route could not describe its request');
  }
  const action = noted.action ?? draft?.action;
  if (action) write(ctx, request, reply.statusCode, { ...draft, ...noted, action });
}

/**
 * The one path of a credential that was refused: a wrong password at `/api/login`, wrong WebDAV
 * Basic credentials, a wrong API token. Each gets the same audit record (a failed `auth.login`
 * with the name it was tried with) and the same warning line, the one fail2ban's filter of
 * docs/operations.md matches. The request's own declared record is not made as well.
 */
export function credentialRefused(
  ctx: ServerContext,
  request: FastifyRequest,
  refusal: { username: string; status: number; via?: string },
): void {
  const username = nameTried(refusal.username);
  logFailedLogin(request, username);
  write(ctx, request, refusal.status, {
    action: 'auth.login',
    username,
    ...(refusal.via !== undefined && { detail: refusal.via }),
  });
  audit(request, { skip: true });
}

/** Routes that send the body themselves (reply.hijack skips onSend) record here, status set. */
export function recordBeforeHijack(request: FastifyRequest, reply: FastifyReply): void {
  recordRequest(request.server.auditContext, request, reply);
}

/**
 * The record of a route that took the socket over (the command WebSocket), which onSend does not
 * see: its declared action, with the outcome it reports as an HTTP-like status.
 */
export function recordTakenOver(
  ctx: ServerContext,
  request: FastifyRequest,
  status: number,
  note: AuditNote,
): void {
  const declared = request.routeOptions.config.audit;
  if (typeof declared !== 'string') return;
  write(ctx, request, status, { action: declared, ...request.auditNote, ...note });
}

/**
 * The record of work a request started and that ends after its answer (a copy or move job's
 * items): written when the outcome is known, as the request's user and address.
 */
export function recordOutcome(
  ctx: ServerContext,
  request: FastifyRequest,
  status: number,
  draft: AuditDraft,
): void {
  write(ctx, request, status, draft);
}

function write(ctx: ServerContext, request: FastifyRequest, status: number, d: AuditDraft): void {
  const signedIn = who(request);
  ctx.audit.record({
    time: Date.now(),
    userId: signedIn.userId || (d.userId ?? 0),
    username: signedIn.username || (d.username ?? ''),
    address: signedIn.address,
    action: d.action,
    path: inScope(request, d.path ?? ''),
    destination: inScope(request, d.destination ?? ''),
    status,
    detail: withToken(d.detail ?? '', request),
  });
}

/**
 * A path as the user sees it in their whole scope. A request confined to one folder (an API token
 * limited to it) names paths inside that folder; its records name them from the scope, as every
 * other record of the user does, so that a search by path finds them.
 */
function inScope(request: FastifyRequest, p: string): string {
  const confinedTo = request.user?.confinedTo;
  if (!p || confinedTo === undefined) return p;
  const scope = joinScopePath(request.user!.scope, '');
  const base =
    scope === '/'
      ? confinedTo
      : confinedTo.startsWith(scope + '/')
        ? confinedTo.slice(scope.length)
        : confinedTo;
  return base === '/' ? p : p === '/' ? base : base + p;
}

/** Requests made with a personal API token say which (its use is also recorded apart, throttled). */
function withToken(detail: string, request: FastifyRequest): string {
  const id = request.apiToken?.token.id;
  if (!id) return detail;
  return detail ? `${detail}; token ${id}` : `token ${id}`;
}

function who(request: FastifyRequest): { userId: number; username: string; address: string } {
  // A unix socket has no client address (unless a trusted proxy names one).
  return { userId: request.user?.id ?? 0, username: request.user?.username ?? '', address: request.ip || '' };
}
