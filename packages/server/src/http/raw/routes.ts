import { DownloadQuery, MEDIA, PathParams } from '@filebrowser/contract';
import type { FastifyPluginAsync } from 'fastify';
import type { ServerContext } from '../../services.js';
import { notFound } from '../../errors.js';
import { fileAccessFor } from '../../files/access/access.js';
import { isSpecial, openPinnedFile } from '../../files/access/anchor.js';
import { callerOf, currentUser } from '../guards.js';
import { FILES, OPEN } from '../reach.js';
import { downloadAnswers, empty, TO_FOLDER } from '../openapi/declare.js';
import { queryValue, redirectToFolder, requestPath } from '../resources/request-path.js';
import { sendArchive } from './send-archive.js';
import { contentDisposition, sendFile } from './send-file.js';

/** The old server answered HEAD of a download with 405: GET only. */
export const NO_HEAD = empty('HEAD is not served: use GET');

/**
 * `GET /api/raw{path}` (contract 6.1): a file with Range and conditional serving, or a folder or
 * `files=` list as a streamed archive.
 */
export function rawRoutes(ctx: ServerContext): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/api/raw',
      { exposeHeadRoute: false, config: { reach: OPEN }, schema: { response: TO_FOLDER } },
      async (request, reply) => redirectToFolder(request, reply),
    );
    // GET only: the old server answered HEAD with 405.
    app.head(
      '/api/raw/*',
      { config: { reach: OPEN }, schema: { params: PathParams, response: { 405: NO_HEAD } } },
      async (_request, reply) => reply.code(405).send(),
    );

    // File Browser's quirk: a missing download permission answers 202 (contract 1.5).
    app.get(
      '/api/raw/*',
      {
        config: { reach: FILES, needs: 'download', refuseWith202: true },
        exposeHeadRoute: false,
        schema: {
          summary: 'download a file, or a folder or a `files` list as an archive',
          params: PathParams,
          querystring: DownloadQuery,
          response: downloadAnswers('the file as stored, or the archive', MEDIA.file),
        },
      },
      async (request, reply) => {
        const access = await fileAccessFor(ctx, currentUser(request));
        const base = requestPath(request);
        const files = queryValue(request, 'files');
        const inline = queryValue(request, 'inline') === 'true';

        if (files === undefined) {
          const r = await access.open(base);
          try {
            if (!r.stat || !r.node) throw notFound();
            if (isSpecial(r.stat)) {
              // Named pipes, sockets and devices are never opened.
              void reply.header('Content-Disposition', contentDisposition(r.name, inline));
              return reply.code(200).send();
            }
            if (!r.stat.isDirectory()) {
              return sendFile(request, reply, await openPinnedFile(r.node), { name: r.name, inline });
            }
          } finally {
            await r.close();
          }
        }

        return sendArchive(ctx, request, reply, access, base, {
          caller: await callerOf(ctx, request, ['download']),
          signedIn: true,
        });
      },
    );
  };
}

export { availableArchiveFormats } from '../../files/archive/index.js';
