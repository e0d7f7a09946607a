import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { notFound } from '../../errors.js';
import { fileAccessFor } from '../../files/access.js';
import { subtitleFor } from '../../preview/subtitles.js';
import { currentUser, requireUser } from '../guards.js';
import { sendBuffer, sendFile } from '../raw/send-file.js';
import { sendStatus } from '../replies.js';
import { queryValue, redirectToFolder, requestPath } from '../resources/request-path.js';

/** Always text/vtt, whatever the source format was (contract 6.3). */
const VTT = 'text/vtt; charset=utf-8';

/**
 * `GET /api/subtitle{path}`: a subtitle file as WebVTT for the video player, with the raw
 * download's headers (`script-src 'none'`, nosniff, `Cache-Control: private`) and Range support.
 */
export function subtitleRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.get('/api/subtitle', async (request, reply) => redirectToFolder(request, reply));
    app.get('/api/subtitle/*', { onRequest: requireUser(ctx) }, async (request, reply) => {
      const access = await fileAccessFor(ctx, currentUser(request));
      // File Browser's quirk: a missing download permission answers 202 (contract 1.5).
      if (!access.perm.download) return sendStatus(reply, 202);
      const r = await access.resolve(requestPath(request));
      if (!r.stat) throw notFound();
      const inline = queryValue(request, 'inline') === 'true';
      const body = await subtitleFor(r);
      if (body.kind === 'file') {
        return sendFile(request, reply, r.real, { name: r.name, inline, contentType: VTT });
      }
      return sendBuffer(
        request,
        reply,
        Buffer.from(body.text, 'utf8'),
        { mtimeMs: body.mtimeMs, etag: body.etag },
        { name: r.name, inline, contentType: VTT, forceType: true },
      );
    });
  };
}
