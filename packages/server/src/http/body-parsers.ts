import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.js';

/** JSON bodies are small (a user, the settings, a share's options); file bodies never come here. */
export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * Reads every request body as JSON, whatever its Content-Type says, as File Browser did: its web
 * client sends `fetch(url, { body: JSON.stringify(…) })` without a Content-Type, which browsers
 * label `text/plain;charset=UTF-8`, and scripts send none or `application/x-www-form-urlencoded`.
 *
 * An empty body is no body (`undefined`), so each route decides whether it needs one: File
 * Browser's routes that never read their body (a share's DELETE) took any label with nothing in it.
 * Plugins whose bodies are file contents (resources, tus) or parsed leniently (login) replace these
 * parsers in their own scope.
 */
export function readBodiesAsJson(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT }, (request, body, done) => {
    // No route matched: the answer is 404 or 405 whatever was sent, so the body is not judged.
    if (request.routeOptions.url === undefined) return done(null, undefined);
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (!text.trim()) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(badRequest(`the request body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
}
