import { MEDIA } from '@filebrowser/contract';
import type { FastifyPluginAsync } from 'fastify';
import { VERSION } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { raw } from './declare.js';
import { DOCS_HTML, DOCS_SCRIPT } from './docs-page.js';
import { OPEN } from '../reach.js';
import { openApiDocument, type RouteRecord } from './document.js';

export const OPENAPI_URL = '/api/openapi.json';

/**
 * `/api/openapi.json` and its page `/api/docs`. Public: the document describes the routes every
 * copy of this server has, nothing of this one's data. It is built on first request, once every
 * route has been registered, and kept (routes do not change while the server runs).
 */
export function openApiRoutes(ctx: AppContext, routes: () => readonly RouteRecord[]): FastifyPluginAsync {
  let text: string | undefined;
  const documentText = () =>
    (text ??= JSON.stringify(
      openApiDocument(routes(), {
        title: ctx.store.settings.get().branding.name || 'File Browser',
        version: VERSION,
        baseURL: ctx.config.baseURL,
      }),
    ));

  return async (app) => {
    app.get(
      OPENAPI_URL,
      {
        config: { reach: OPEN },
        schema: {
          summary: 'this document',
          tags: ['docs'],
          response: { 200: raw('the OpenAPI 3.1 document of this server', MEDIA.json) },
        },
      },
      async (_request, reply) => reply.type('application/json; charset=utf-8').send(documentText()),
    );

    app.get(
      '/api/docs',
      {
        config: { reach: OPEN },
        schema: {
          summary: 'a readable page of this document',
          tags: ['docs'],
          response: { 200: raw('the page', MEDIA.html) },
        },
      },
      async (_request, reply) => reply.type('text/html; charset=utf-8').send(DOCS_HTML),
    );

    app.get(
      '/api/docs/render.js',
      {
        config: { reach: OPEN },
        schema: {
          summary: 'the script of the page',
          tags: ['docs'],
          response: { 200: raw('the script', MEDIA.javascript) },
        },
      },
      async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(DOCS_SCRIPT),
    );
  };
}
