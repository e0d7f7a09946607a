import { Readable } from 'node:stream';
import { periodically } from '../periodic.js';
import { PathParams, TusQuery } from '@filebrowser/contract';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { audit, type AuditDeclaration } from '../../audit/http.js';
import type { ServerContext } from '../../services.js';
import { AppError } from '../../errors.js';
import type { FileEvents } from '../../files/change/events.js';
import { runHooks } from '../../runner/hooks.js';
import { ResumableUploads, type UploadStatus } from '../../uploads/resumable.js';
import { runAfterHooks } from '../file-hooks.js';
import { callerOf, currentUser } from '../guards.js';
import { FILE_CHANGES, OPEN } from '../reach.js';
import { empty, rawBody, statusLine } from '../openapi/declare.js';

const TUS_VERSION = '1.0.0';
const PATCH_TYPE = 'application/offset+octet-stream';

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function pathOf(request: FastifyRequest): string {
  return '/' + ((request.params as { '*'?: string })['*'] ?? '');
}

/** An upload is recorded once, when it completes (or when a call fails): not each of its chunks. */
const uploadAudit: AuditDeclaration = (request) => ({ action: 'file.upload', path: pathOf(request) });

/**
 * `/api/tus{path}`: File Browser's resumable upload endpoint, where the upload URL is the target
 * path. It also answers the standard tus 1.0 handshake (OPTIONS, Tus-Resumable), so any tus client works.
 */
export function tusRoutes(
  ctx: ServerContext,
  events: FileEvents = {},
  uploads = new ResumableUploads(ctx),
): FastifyPluginAsync {
  /** Asked as a finished upload lands: its caller may still create, and modify what it replaces. */
  const landingAllowed = (request: FastifyRequest) => (replacing: boolean) =>
    callerOf(ctx, request, replacing ? ['create', 'modify'] : ['create']);

  /** A finished upload is an upload event like a plain POST: after-hooks and change listeners. */
  async function finished(request: FastifyRequest, reply: FastifyReply, status: UploadStatus) {
    if (!status.completed) return audit(request, { skip: true });
    const file = status.completed;
    await runAfterHooks(ctx, currentUser(request), reply, 'upload', { file });
    try {
      await events.changed?.(file);
    } catch (err) {
      ctx.log.warn({ err }, 'after upload: listener failed');
    }
  }

  return async (app) => {
    // Upload bodies are streamed to disk by the handler, never parsed or buffered.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    // Abandoned uploads hold disk space and a place in their owner's limits: sweep them at start
    // (the server may have been down longer than the expiry) and then at least hourly.
    const everyMs = Math.min(3600_000, ctx.config.uploadsExpiry * 1000);
    periodically(app, ctx, { name: 'upload-sweep', everyMs, failure: 'upload sweep failed' }, () =>
      uploads.sweep(),
    );

    app.addHook('onSend', async (_request, reply) => {
      void reply.header('Tus-Resumable', TUS_VERSION);
    });

    const routes = ['/api/tus', '/api/tus/*'];
    // Every upload call, cancelling included, takes the permission the upload is made with.
    const uploader = { reach: FILE_CHANGES, needs: 'create' } as const;
    const tusHeaders = (reply: FastifyReply) =>
      reply
        .header('Tus-Version', TUS_VERSION)
        .header('Tus-Extension', 'creation,termination')
        .header('Cache-Control', 'no-store');

    for (const url of routes) {
      const params = url.endsWith('*') ? { params: PathParams } : {};
      const schema = (summary: string, rest: FastifySchema): FastifySchema => ({
        summary,
        tags: ['tus'],
        ...params,
        ...rest,
      });
      app.options(
        url,
        {
          config: { reach: OPEN },
          schema: schema('the tus handshake', { response: { 204: empty('Tus-Version and Tus-Extension') } }),
        },
        async (_request, reply) => tusHeaders(reply).code(204).send(),
      );

      app.post(
        url,
        {
          config: { ...uploader, audit: uploadAudit },
          schema: schema('start an upload of Upload-Length bytes to the path', {
            querystring: TusQuery,
            response: { 201: statusLine('started: Location is the upload URL, Upload-Offset 0') },
          }),
        },
        async (request, reply) => {
          const query = request.query as Record<string, string | undefined>;
          if (header(request, 'upload-defer-length')) {
            throw new AppError('bad_request', 'Upload-Defer-Length is not supported');
          }
          const user = currentUser(request);
          const status = await uploads.create(
            user,
            pathOf(request),
            header(request, 'upload-length'),
            query.override === 'true',
            async (file) => void (await runHooks(ctx, user, 'upload', 'before', { file })),
          );
          await finished(request, reply, status);
          const location = `${ctx.config.baseURL}/api/tus${encodePath(pathOf(request))}`;
          return reply
            .code(201)
            .header('Location', location)
            .header('Upload-Offset', '0')
            .type('text/plain; charset=utf-8')
            .send('201 Created\n');
        },
      );

      const head = async (request: FastifyRequest, reply: FastifyReply) => {
        // Asking how far an upload came is no upload: recorded only when it finishes one.
        audit(request, { skip: true });
        let status = await uploads.status(currentUser(request), pathOf(request));
        if (status.offset === status.length) {
          audit(request, { skip: false });
          // Every byte came, but its last step failed where nothing could undo it (the database
          // away): finished now, as an empty PATCH would, or a client takes it for done with no file.
          status = await uploads.append(
            currentUser(request),
            pathOf(request),
            String(status.offset),
            Readable.from([]),
            landingAllowed(request),
          );
          await finished(request, reply, status);
        }
        const { offset, length } = status;
        return tusHeaders(reply)
          .code(200)
          .header('Upload-Offset', String(offset))
          .header('Upload-Length', String(length))
          .send();
      };
      const progress = schema('how far an upload is', {
        response: { 200: empty('Upload-Offset and Upload-Length say it') },
      });
      app.head(url, { config: { ...uploader, audit: uploadAudit }, schema: progress }, head);
      app.get(url, { config: { ...uploader, audit: uploadAudit }, schema: progress }, head);

      // The guard checks the permission first (contract 13: 403 before 415).
      app.patch(
        url,
        {
          config: { ...uploader, audit: uploadAudit },
          schema: schema('the next bytes of an upload, at Upload-Offset', {
            readBody: rawBody('the bytes', 'application/offset+octet-stream'),
            response: { 204: empty('taken: Upload-Offset is the new offset') },
          }),
        },
        async (request, reply) => {
          if ((header(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase() !== PATCH_TYPE) {
            throw new AppError('unsupported_media_type', `Content-Type must be ${PATCH_TYPE}`);
          }
          const status = await uploads.append(
            currentUser(request),
            pathOf(request),
            header(request, 'upload-offset'),
            request.raw,
            landingAllowed(request),
          );
          await finished(request, reply, status);
          const { offset } = status;
          return reply.code(204).header('Upload-Offset', String(offset)).send();
        },
      );

      app.delete(
        url,
        {
          config: { ...uploader, audit: (request) => ({ action: 'upload.cancel', path: pathOf(request) }) },
          schema: schema('cancel an upload', { response: { 204: empty('cancelled, its bytes removed') } }),
        },
        async (request, reply) => {
          await uploads.cancel(currentUser(request), pathOf(request));
          return reply.code(204).send();
        },
      );
    }
  };
}

function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}
