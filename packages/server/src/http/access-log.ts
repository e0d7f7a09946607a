import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pathOnly } from '../logging.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Body bytes written so far (see countBytes). */
    sentBytes?: number;
  }
}

/**
 * One `info` record per request when its response is done: the access log. Fastify's own
 * request logging is off (it logs the query string, where `?auth=` tokens travel).
 */
export function installAccessLog(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    pinClientAddress(request);
    countBytes(request, reply);
  });
  app.addHook('onResponse', async (request, reply) => logRequest(request, reply));
}

/**
 * Fixes `request.ip` for the whole life of the request, as it is when the request arrives.
 * Fastify reads it from the request's socket at every use, and Node detaches the socket from a
 * request that was destroyed (a body stream left early): every later reader (the access log,
 * the audit record, the login throttle, the error answer) would then throw instead of naming
 * the client. Installed first, so nothing reads it before.
 */
function pinClientAddress(request: FastifyRequest): void {
  let ip: string | undefined;
  try {
    ip = request.ip;
  } catch {
    ip = undefined;
  }
  Object.defineProperty(request, 'ip', { value: ip, enumerable: true });
}

/** Also called by routes that hijack the reply, which skips the onResponse hook. */
export function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  request.log.info(
    {
      event: 'request',
      address: request.ip,
      user: request.user?.username,
      method: request.method,
      path: pathOnly(request.url),
      status: reply.raw.statusCode,
      bytes: request.sentBytes ?? 0,
      ms: Math.round(reply.elapsedTime),
    },
    'request',
  );
}

/**
 * A warning fail2ban can act on (docs/operations.md). The username is JSON-quoted and the address
 * ends the line, so a username cannot make the line name another address.
 */
export function logFailedLogin(request: FastifyRequest, username: string): void {
  // A unix socket has no client address (unless a trusted proxy names one).
  const address = request.ip || '-';
  request.log.warn(
    {
      event: 'login_failed',
      address,
      method: request.method,
      path: pathOnly(request.url),
      user: username,
    },
    `login failed for user ${JSON.stringify(username)} from ${address}`,
  );
}

/** Counts the body bytes actually sent: streamed replies have no Content-Length to read. */
function countBytes(request: FastifyRequest, reply: FastifyReply): void {
  const res = reply.raw;
  request.sentBytes = 0;
  const count = (chunk: unknown) => {
    if (typeof chunk === 'string') request.sentBytes! += Buffer.byteLength(chunk);
    else if (chunk instanceof Uint8Array) request.sentBytes! += chunk.byteLength;
  };
  const write = res.write;
  const end = res.end;
  // Some responses' end() calls their own write() (light-my-request's do): counted once, here.
  let ending = false;
  res.write = function (this: typeof res, chunk: unknown, ...rest: unknown[]) {
    if (!ending) count(chunk);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.end = function (this: typeof res, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') count(chunk);
    ending = true;
    try {
      return (end as (...a: unknown[]) => typeof res).call(this, chunk, ...rest);
    } finally {
      ending = false;
    }
  } as typeof res.end;
}
