import { MEDIA, PathParams, SearchHit, SearchQuery } from '@filebrowser/contract';
import type { FastifyPluginAsync } from 'fastify';
import { whileAllowed } from '../../auth/caller.js';
import type { ServerContext } from '../../services.js';
import { notFound } from '../../errors.js';
import { fileAccessFor } from '../../files/access/access.js';
import { searchTree } from '../../files/search/search.js';
import { clientGone } from '../client-gone.js';
import { callerOf, currentUser } from '../guards.js';
import { heavyTurn } from '../heavy.js';
import { FILES, OPEN } from '../reach.js';
import { text, TO_FOLDER } from '../openapi/declare.js';
import { queryValue, redirectToFolder, requestPath } from '../resources/request-path.js';
import { jsonLines } from './stream.js';

const KEEP_ALIVE_MS = 5000;
/** Hits found ahead while the caller is asked again (auth/caller.ts `whileAllowed`). */
const HITS_AHEAD = 256;

/**
 * `GET /api/search{dir}?query=` (contract 7): JSON lines streamed as they are found, with the
 * keep-alive line; the walk stops when the client goes away.
 */
export function searchRoutes(ctx: ServerContext): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/api/search',
      { config: { reach: OPEN }, schema: { response: TO_FOLDER } },
      async (request, reply) => redirectToFolder(request, reply),
    );
    app.get(
      '/api/search/*',
      {
        config: { reach: FILES },
        schema: {
          summary: 'search below a folder: one JSON line per hit, streamed as found',
          params: PathParams,
          querystring: SearchQuery,
          response: {
            200: text('JSON lines of SearchHit, and blank keep-alive lines', SearchHit, MEDIA.jsonLines),
          },
        },
      },
      async (request, reply) => {
        const gone = clientGone(reply);
        const caller = await callerOf(ctx, request);
        const access = await fileAccessFor(ctx, currentUser(request));
        // The search root is confined but not rule-checked (contract 7); what it finds is.
        const root = await access.resolve(requestPath(request), { rules: false });
        if (!root.stat) throw notFound();
        // A search walks a whole tree: heavy work, in its user's turn (http/heavy.ts).
        await heavyTurn(ctx, request, reply);
        const query = queryValue(request, 'query') ?? '';
        // Each hit goes out only while the caller may still search (auth/caller.ts); the walk goes
        // on while the caller is asked, and stops with the stream.
        const stop = new AbortController();
        const signal = AbortSignal.any([gone, stop.signal]);
        const hits = root.stat.isDirectory()
          ? whileAllowed(searchTree(access, root.virtual, query, { signal, dev: root.stat.dev }), caller, {
              ahead: HITS_AHEAD,
              stop,
            })
          : (async function* () {})();
        const body = jsonLines(hits, {
          keepAliveMs: KEEP_ALIVE_MS,
          signal: gone,
          onError: (err) => ctx.log.warn({ err }, 'search failed while streaming'),
        });
        return reply.code(200).type('text/plain; charset=utf-8').send(body);
      },
    );
  };
}
