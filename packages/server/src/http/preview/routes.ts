import { MEDIA, PreviewParams, PreviewQuery } from '@filebrowser/contract';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { badRequest, notFound } from '../../errors.js';
import { fileAccessFor } from '../../files/access/access.js';
import { openPinnedFile } from '../../files/access/anchor.js';
import type { PreviewService } from '../../preview/service.js';
import { clientGone } from '../client-gone.js';
import { currentUser } from '../guards.js';
import { FILES, OPEN } from '../reach.js';
import { downloadAnswers, statusLine, TO_FOLDER } from '../openapi/declare.js';
import { sendBuffer, sendFile } from '../raw/send-file.js';
import { sendStatus } from '../replies.js';
import { queryValue, redirectToFolder, requestPath } from '../resources/request-path.js';

/**
 * `GET /api/preview/{thumb|big}{path}` (contract 6.2). Thumbnails and big previews of images (and
 * of videos when ffmpeg is there), served with the raw download's headers; the `key` query is a
 * client-side cache-buster and is ignored.
 */
export function previewRoutes(ctx: AppContext, previews: PreviewService): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/api/preview',
      { config: { reach: OPEN }, schema: { response: TO_FOLDER } },
      async (request, reply) => redirectToFolder(request, reply),
    );
    app.get(
      '/api/preview/:size',
      {
        config: { reach: OPEN },
        schema: { params: Type.Pick(PreviewParams, ['size']), response: TO_FOLDER },
      },
      async (request, reply) => redirectToFolder(request, reply),
    );

    // File Browser's quirk: a missing download permission answers 202 (contract 1.5).
    app.get(
      '/api/preview/:size/*',
      {
        config: { reach: FILES, needs: 'download', refuseWith202: true },
        schema: {
          summary: 'a thumbnail or big preview of an image or video',
          params: PreviewParams,
          querystring: PreviewQuery,
          response: {
            ...downloadAnswers(
              'the preview image, or the file itself when it needs none (octet-stream when not inert)',
              MEDIA.image,
              MEDIA.archive,
            ),
            501: statusLine('no preview can be made of this file'),
          },
        },
      },
      async (request, reply) => {
        const gone = clientGone(reply);
        const access = await fileAccessFor(ctx, currentUser(request));
        const { size } = request.params as { size: string };
        if (size !== 'thumb' && size !== 'big') {
          throw badRequest(`unknown preview size ${size}: use thumb or big`);
        }
        const r = await access.open(requestPath(request));
        try {
          if (!r.stat || !r.node) throw notFound();
          const inline = queryValue(request, 'inline') === 'true';
          const answer = await previews.preview(r, size, gone, access.owner);
          switch (answer.kind) {
            case 'none':
              return sendStatus(reply, 501);
            case 'original':
              return sendFile(request, reply, await openPinnedFile(r.node), { name: r.name, inline });
            case 'generated':
              // Labelled with what it is (a JPEG thumbnail of a PNG is image/jpeg), named as the source.
              return sendBuffer(
                request,
                reply,
                answer.image.data,
                { mtimeMs: answer.mtimeMs, etag: answer.etag },
                { name: r.name, inline, contentType: answer.image.type },
              );
          }
        } finally {
          await r.close();
        }
      },
    );
  };
}
