import { periodically } from '../periodic.js';
import { PathParams, Usage, UsageQuery } from '@filebrowser/contract';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { fileAccessFor, serverAccess } from '../../files/access/access.js';
import { usage } from '../../files/change/ops.js';
import { RECOUNT_EVERY_MS } from '../../files/change/quota.js';
import { currentUser } from '../guards.js';
import { FILES, OPEN } from '../reach.js';
import { TO_FOLDER } from '../openapi/declare.js';
import { queryValue, redirectToFolder, requestPath } from '../resources/request-path.js';

/**
 * `GET /api/usage{path}`: disk usage of the file system holding a folder (contract 5.8); with a
 * quota on the user's scope, the quota and what the scope holds instead (files/quota.ts).
 */
export function usageRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    // Counts drift when files change behind the server's back: every counted scope is walked
    // again at start (in the background: the server may have been down while things changed)
    // and then periodically.
    periodically(
      app,
      ctx,
      {
        name: 'quota-recount',
        everyMs: RECOUNT_EVERY_MS,
        failure: 'quota recount failed',
        awaitFirst: false,
      },
      async () => {
        const access = await serverAccess(ctx);
        await access.quota.recountAll(access);
      },
    );

    app.get(
      '/api/usage',
      { config: { reach: OPEN }, schema: { response: TO_FOLDER } },
      async (request, reply) => redirectToFolder(request, reply),
    );
    app.get(
      '/api/usage/*',
      {
        config: { reach: FILES },
        schema: {
          summary: 'space used and total of the file system holding a folder, or the user’s quota',
          params: PathParams,
          querystring: UsageQuery,
          response: { 200: Usage },
        },
      },
      async (request) => {
        const user = currentUser(request);
        const access = await fileAccessFor(ctx, user);
        const r = await access.open(requestPath(request));
        try {
          const disk = await usage(r);
          const quota = await access.quota.ofScope(
            access,
            user.scope,
            queryValue(request, 'recount') === 'true',
          );
          if (!quota) return disk;
          return { total: quota.limit, used: quota.used, quota: quota.limit };
        } finally {
          await r.close();
        }
      },
    );
  };
}
