import { PassThrough } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { notFound } from '../../errors.js';
import { fileAccessFor } from '../../files/access.js';
import { searchTree } from '../../files/search.js';
import { currentUser, requireUser } from '../guards.js';
import { queryValue, redirectToFolder, requestPath } from '../resources/request-path.js';

const KEEP_ALIVE_MS = 5000;
const BATCH_BYTES = 16 * 1024;
const BATCH_MS = 50;

/**
 * `GET /api/search{dir}?query=` (contract 7): JSON lines streamed as they are found. An empty
 * line goes out after 5 s of silence (the old server did it once; we repeat it, which the client
 * ignores the same way). The walk stops when the client goes away.
 */
export function searchRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.get('/api/search', async (request, reply) => redirectToFolder(request, reply));
    app.get('/api/search/*', { onRequest: requireUser(ctx) }, async (request, reply) => {
      const access = await fileAccessFor(ctx, currentUser(request));
      // The search root is confined but not rule-checked (contract 7); what it finds is.
      const root = await access.scope.resolve(requestPath(request));
      if (!root.stat) throw notFound();
      const query = queryValue(request, 'query') ?? '';
      const abort = new AbortController();
      const out = new PassThrough();
      reply.raw.once('close', () => abort.abort());

      let lastWrite = Date.now();
      const keepAlive = setInterval(() => {
        if (Date.now() - lastWrite >= KEEP_ALIVE_MS) {
          out.write('\n');
          lastWrite = Date.now();
        }
      }, KEEP_ALIVE_MS / 5);

      const run = async () => {
        let batch = '';
        let batchStarted = 0;
        let first = true;
        const flush = async () => {
          if (!batch) return;
          const ok = out.write(batch);
          batch = '';
          lastWrite = Date.now();
          if (!ok) await new Promise((resolve) => out.once('drain', resolve));
        };
        try {
          if (root.stat?.isDirectory()) {
            for await (const hit of searchTree(access, root.real, root.virtual, query, abort.signal)) {
              if (!batch) batchStarted = Date.now();
              batch += JSON.stringify(hit) + '\n';
              // The first hit goes out at once; later ones in small batches.
              if (first || batch.length >= BATCH_BYTES || Date.now() - batchStarted >= BATCH_MS) {
                first = false;
                await flush();
              }
            }
          }
          await flush();
        } catch (err) {
          ctx.log.warn({ err }, 'search failed while streaming');
          out.write('500 Internal Server Error\n');
        } finally {
          clearInterval(keepAlive);
          out.end();
        }
      };
      void run();
      return reply.code(200).type('text/plain; charset=utf-8').send(out);
    });
  };
}
