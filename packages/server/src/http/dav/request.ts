import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerContext } from '../../services.js';
import type { FileAccess } from '../../files/access/access.js';
import type { FileEvents } from '../../files/change/events.js';
import type { StoredUser } from '../../store/users.js';

/** One WebDAV request, after authentication: who asks, through which file access, about what. */
export interface DavRequest {
  ctx: ServerContext;
  events: FileEvents;
  request: FastifyRequest;
  reply: FastifyReply;
  user: StoredUser;
  access: FileAccess;
  /** The public path of the WebDAV root (`{baseURL}/dav`). */
  prefix: string;
  /** The virtual path the request URL names, as sent (canonicalised by the resolver when opened). */
  virtual: string;
  /** Lock tokens the `If` header submits (only the user's own locks are honoured: see locks.ts). */
  submitted: Set<string>;
  /** The `If` header evaluated false (the request is answered 412). */
  ifFailed: boolean;
}

/** A header value, the first when repeated. */
export function header(dav: Pick<DavRequest, 'request'>, name: string): string | undefined {
  const v = dav.request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Runs change listeners without letting them decide the answer (as the resources routes do). */
export async function notify(dav: DavRequest, what: string, fn: () => Promise<void> | void): Promise<void> {
  try {
    await fn();
  } catch (err) {
    dav.ctx.log.warn({ err }, `after ${what}: listener failed`);
  }
}
