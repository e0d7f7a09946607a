import { InlineQuery, MEDIA, PathParams } from '@filebrowser/contract';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { notFound } from '../../errors.js';
import { fileAccessFor } from '../../files/access/access.js';
import { openPinnedFile } from '../../files/access/anchor.js';
import { subtitleFor } from '../../preview/subtitles.js';
import { currentUser } from '../guards.js';
import { FILES, OPEN } from '../reach.js';
import { downloadAnswers, TO_FOLDER } from '../openapi/declare.js';
import { sendBuffer, sendFile } from '../raw/send-file.js';
import { queryValue, redirectToFolder, requestPath } from '../resources/request-path.js';

/** Always text/vtt, whatever the source format was (contract 6.3). */
const VTT = 'text/vtt; charset=utf-8';

/**
 * `GET /api/subtitle{path}`: a subtitle file as WebVTT for the video player, with the raw
 * download's headers (`script-src 'none'`, nosniff, `Cache-Control: private`) and Range support.
 */
export function subtitleRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/api/subtitle',
      { config: { reach: OPEN }, schema: { response: TO_FOLDER } },
      async (request, reply) => redirectToFolder(request, reply),
    );
    // File Browser's quirk: a missing download permission answers 202 (contract 1.5).
    app.get(
      '/api/subtitle/*',
      {
        config: { reach: FILES, needs: 'download', refuseWith202: true },
        schema: {
          summary: 'a subtitle file as WebVTT',
          params: PathParams,
          querystring: InlineQuery,
          response: downloadAnswers('the subtitles', MEDIA.vtt),
        },
      },
      async (request, reply) => {
        const access = await fileAccessFor(ctx, currentUser(request));
        const r = await access.open(requestPath(request));
        try {
          if (!r.stat || !r.node) throw notFound();
          const inline = queryValue(request, 'inline') === 'true';
          const body = await subtitleFor(r);
          if (body.kind === 'file') {
            const fh = await openPinnedFile(r.node);
            return await sendFile(request, reply, fh, { name: r.name, inline, contentType: VTT });
          }
          return await sendBuffer(
            request,
            reply,
            Buffer.from(body.text, 'utf8'),
            { mtimeMs: body.mtimeMs, etag: body.etag },
            { name: r.name, inline, contentType: VTT, forceType: true },
          );
        } finally {
          await r.close();
        }
      },
    );
  };
}
