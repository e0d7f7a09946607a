import { PathParams, Usage } from '@filebrowser/contract';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { fileAccessFor } from '../../files/access.js';
import { usage } from '../../files/ops.js';
import { currentUser, requireUser } from '../guards.js';
import { TO_FOLDER } from '../openapi/declare.js';
import { redirectToFolder, requestPath } from '../resources/request-path.js';

/** `GET /api/usage{path}`: disk usage of the file system holding a folder (contract 5.8). */
export function usageRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.get('/api/usage', { schema: { response: TO_FOLDER } }, async (request, reply) =>
      redirectToFolder(request, reply),
    );
    app.get(
      '/api/usage/*',
      {
        onRequest: requireUser(ctx),
        schema: {
          summary: 'space used and total of the file system holding a folder',
          params: PathParams,
          response: { 200: Usage },
        },
      },
      async (request) => {
        const access = await fileAccessFor(ctx, currentUser(request));
        const r = await access.open(requestPath(request));
        try {
          return await usage(r);
        } finally {
          await r.close();
        }
      },
    );
  };
}
