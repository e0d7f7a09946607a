import type { FastifyReply, FastifyRequest } from 'fastify';

/** The `{path}` of a wildcard route (`/api/resources/*`), decoded by the router, with its leading `/`. */
export function requestPath(request: FastifyRequest): string {
  return '/' + ((request.params as { '*'?: string })['*'] ?? '');
}

/** A query value, the first when repeated. */
export function queryValue(request: FastifyRequest, name: string): string | undefined {
  const v = (request.query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A header value, the first when repeated. */
export function headerValue(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A route prefix without its path answers 301 to `prefix/` (contract 1.1), query kept. The
 * Location is relative to the request as received, so a base URL in front survives.
 */
export function redirectToFolder(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const original = request.originalUrl;
  const q = original.indexOf('?');
  const pathname = q === -1 ? original : original.slice(0, q);
  const query = q === -1 ? '' : original.slice(q);
  return reply.redirect(pathname + '/' + query, 301);
}
