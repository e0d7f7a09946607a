import { Type } from '@sinclair/typebox';
import {
  CHECKSUM_ALGORITHMS,
  DELETE_OUTCOME_HEADER,
  FileInfo,
  MEDIA,
  PathParams,
  RecursiveEntry,
  ResourcePatchQuery,
  ResourceQuery,
  ResourceUploadQuery,
  TRASH_COPIED_HEADER,
  type ChecksumAlgorithm,
} from '@filebrowser/contract';
import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditAction } from '@filebrowser/contract';
import { audit, type AuditDeclaration } from '../../audit/http.js';
import { assertMay, may, patchOperations, type Operation } from '../../auth/policy.js';
import type { ServerContext } from '../../services.js';
import { AppError, badRequest, notFound } from '../../errors.js';
import { fileAccessFor, type FileAccess } from '../../files/access/access.js';
import { openPinnedFile } from '../../files/access/anchor.js';
import type { FileEvents } from '../../files/change/events.js';
import { directoryInfoJson, fileInfo } from '../../files/listing/info.js';
import { etagOf } from '../../files/listing/go-format.js';
import { recursiveEntries } from '../../files/access/tree.js';
import { checksum } from '../../files/change/ops.js';
import { makeDirectory, writeFileAtomic } from '../../files/change/write.js';
import type { Opened } from '../../files/access/resolver.js';
import { deleteOrTrash } from '../../files/change/trash.js';
import { sharesFollowDelete } from '../../shares/service.js';
import { davFollowDelete } from '../dav/follow.js';
import { withHooks } from '../file-hooks.js';
import { fileSafetyHeaders } from '../file-safety.js';
import { declaredLength } from '../content-length.js';
import { clientGone } from '../client-gone.js';
import { callerOf, currentUser } from '../guards.js';
import { heavyTurn, isBigFolder } from '../heavy.js';
import { FILE_CHANGES, FILES, OPEN } from '../reach.js';
import { empty, rawBody, statusLine, TO_FOLDER } from '../openapi/declare.js';
import { notify } from '../notify.js';
import { sendStatus } from '../replies.js';
import { headerValue, queryValue, redirectToFolder, requestPath } from './request-path.js';
import { transfer } from './transfer.js';

/** Only the exact string "true" counts, as in File Browser. */
const isTrue = (v: string | undefined) => v === 'true';

/** The destination of a PATCH as the client named it (decoded twice, see the PATCH route). */
function patchDestination(request: FastifyRequest): string {
  try {
    return decodeURIComponent(queryValue(request, 'destination') ?? '/');
  } catch {
    return queryValue(request, 'destination') ?? '';
  }
}

const parentOf = (p: string) => p.replace(/\/+$/, '').replace(/\/[^/]*$/, '') || '/';

/** A file route's record: the action, the request's path and, for PATCH, where it went. */
const fileAudit =
  (action: AuditAction | ((request: FastifyRequest) => AuditAction)): AuditDeclaration =>
  (request) => ({
    action: typeof action === 'function' ? action(request) : action,
    path: requestPath(request),
  });

/** A rename into another folder is a move. */
const patchAudit: AuditDeclaration = (request) => {
  const path = requestPath(request);
  const destination = patchDestination(request);
  const kind = queryValue(request, 'action');
  const action: AuditAction =
    kind === 'copy' ? 'file.copy' : parentOf(path) === parentOf(destination) ? 'file.rename' : 'file.move';
  return { action, path, destination };
};

/**
 * `/api/resources{path}` and `/api/resources/recursive{path}` (contract 5.1–5.7). Handlers are
 * thin: the file services do the work, the resolver and rules guard every path.
 */
export function resourcesRoutes(ctx: ServerContext, events: FileEvents = {}): FastifyPluginAsync {
  const accessOf = (request: FastifyRequest): Promise<FileAccess> => fileAccessFor(ctx, currentUser(request));

  async function getResource(request: FastifyRequest, reply: FastifyReply) {
    const access = await accessOf(request);
    const r = await access.open(requestPath(request));
    try {
      // A big folder's listing waits for its user's turn of heavy work (http/heavy.ts).
      if (r.stat && isBigFolder(r.stat)) await heavyTurn(ctx, request, reply);
      return await answerResource(request, reply, access, r);
    } finally {
      await r.close();
    }
  }

  async function answerResource(request: FastifyRequest, reply: FastifyReply, access: FileAccess, r: Opened) {
    if (!r.stat || !r.node) throw notFound();
    const canDownload = may(access.perm, 'download');
    const opts = {
      content: canDownload,
      modify: may(access.perm, 'modify'),
      readHeader: true,
      listingReadHeader: !ctx.config.disableTypeDetectionByHeader,
      sorting: access.sorting,
    };
    if (r.stat.isDirectory()) {
      // Folders are answered with ready JSON text (often the listing cache's), or for big ones
      // with text made piece by piece as the socket takes it (chunked, its length unknown).
      const json = await directoryInfoJson(access, r, opts);
      if (json) {
        reply.type('application/json; charset=utf-8');
        if ('length' in json) reply.header('Content-Length', String(json.length));
        return reply.send(Readable.from(json.pieces, { objectMode: false }));
      }
    }
    const info = await fileInfo(access, r, opts);
    if (info.isDir) return info;
    if (isTrue(headerValue(request, 'x-encoding'))) {
      // File Browser's quirk: a missing download permission answers 202 (contract 1.5).
      if (!canDownload) return sendStatus(reply, 202);
      if (info.type === 'text') {
        const fh = await openPinnedFile(r.node);
        fileSafetyHeaders(reply, 'application/octet-stream');
        return reply.type('application/octet-stream').send(fh.createReadStream());
      }
      return info;
    }
    const algo = queryValue(request, 'checksum');
    if (algo) {
      if (!canDownload) return sendStatus(reply, 202);
      if (!(CHECKSUM_ALGORITHMS as readonly string[]).includes(algo)) {
        throw badRequest(`unsupported checksum algorithm ${algo}: use md5, sha1, sha256 or sha512`);
      }
      const { content: _content, ...withoutContent } = info;
      return { ...withoutContent, checksums: { [algo]: await checksum(r, algo as ChecksumAlgorithm) } };
    }
    return info;
  }

  return async (app) => {
    // Request bodies are file contents: streamed to disk by the handler, never parsed or buffered.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    for (const prefix of ['/api/resources', '/api/resources/recursive']) {
      app.route({
        method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'],
        url: prefix,
        // A redirect to the folder form: the request that follows it is the one recorded.
        config: { reach: OPEN, audit: false },
        schema: { response: TO_FOLDER },
        handler: async (request, reply) => redirectToFolder(request, reply),
      });
    }

    app.get(
      '/api/resources/*',
      {
        config: { reach: FILES },
        schema: {
          summary: 'a folder with its items, or a file (with its text content when small)',
          params: PathParams,
          querystring: ResourceQuery,
          response: {
            200: {
              description: 'the item; with X-Encoding: true, a text file’s bytes',
              content: { [MEDIA.json]: { schema: FileInfo }, [MEDIA.archive]: { schema: {} } },
            },
            202: statusLine('refused: the user may not download (File Browser’s answer)'),
          },
        },
        // The schema documents the answer; the objects are built field by field in Go's order,
        // which the schema serializer would reorder (required fields first).
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      getResource,
    );

    app.get(
      '/api/resources/recursive/*',
      {
        config: { reach: FILES },
        schema: {
          summary: 'every item below a folder, streamed',
          params: PathParams,
          response: { 200: Type.Array(RecursiveEntry) },
        },
      },
      async (request, reply) => {
        const gone = clientGone(reply);
        const access = await accessOf(request);
        // The root of the walk is resolved and confined, but not rule-checked (contract 5.7).
        const root = await access.resolve(requestPath(request), { rules: false });
        if (!root.stat) throw notFound();
        if (!root.stat.isDirectory()) throw badRequest('path is not a directory');
        // A walk of a whole tree is heavy work, whatever the size of its first folder.
        await heavyTurn(ctx, request, reply);
        reply.type('application/json; charset=utf-8');
        return reply.send(Readable.from(jsonArrayStream(walkFrom(access, root.virtual, gone))));
      },
    );

    app.post(
      '/api/resources/*',
      {
        config: {
          reach: FILE_CHANGES,
          needs: 'create',
          audit: fileAudit((request) =>
            request.url.split('?')[0]!.endsWith('/') ? 'file.create' : 'file.upload',
          ),
        },
        schema: {
          summary: 'upload a file, or make a folder (a path ending in "/")',
          params: PathParams,
          querystring: ResourceUploadQuery,
          readBody: rawBody('the file’s bytes, streamed to disk; none for a folder', MEDIA.archive),
          response: { 200: statusLine('written (ETag: the new version)') },
        },
      },
      async (request, reply) => {
        const access = await accessOf(request);
        const r = await access.open(requestPath(request));
        try {
          const { dirMode, fileMode } = ctx.store.settings.get();
          const user = currentUser(request);
          if (r.trailingSlash) {
            await withHooks(ctx, user, reply, 'upload', { file: r.real }, () =>
              makeDirectory(access, r, dirMode),
            );
            return sendStatus(reply, 200);
          }
          if (r.linkStat) {
            if (!isTrue(queryValue(request, 'override'))) throw new AppError('conflict');
            assertMay(access.perm, 'modify');
            // The old server removed a folder here when the write failed (contract 17.1): refuse instead.
            if (r.stat?.isDirectory()) throw new AppError('conflict', 'a folder exists at this path');
          }
          const override = isTrue(queryValue(request, 'override'));
          // A write that may replace what it meets asks for modify again too, as it lands.
          const replace = !!r.linkStat || (override && may(access.perm, 'modify'));
          const needs: Operation[] = replace ? ['create', 'modify'] : ['create'];
          const st = await withHooks(ctx, user, reply, 'upload', { file: r.real }, () =>
            writeFileAtomic(access, r, request.raw, {
              fileMode,
              dirMode,
              length: declaredLength(request.raw),
              stillAllowed: () => callerOf(ctx, request, needs),
              replace,
            }),
          );
          await notify(ctx, 'upload', () => events.changed?.(r.real));
          void reply.header('ETag', etagOf(st));
          return sendStatus(reply, 200);
        } finally {
          await r.close();
        }
      },
    );

    app.put(
      '/api/resources/*',
      {
        config: { reach: FILE_CHANGES, needs: 'modify', audit: fileAudit('file.modify') },
        schema: {
          summary: 'replace the contents of an existing file',
          params: PathParams,
          readBody: rawBody('the file’s new bytes, streamed to disk', MEDIA.archive),
          response: {
            200: statusLine('saved (ETag: the new version)'),
            405: empty('a folder (a path ending in "/") is not written'),
          },
        },
      },
      async (request, reply) => {
        const access = await accessOf(request);
        const r = await access.open(requestPath(request));
        try {
          if (r.trailingSlash) return reply.code(405).send();
          if (!r.stat) throw notFound();
          const { dirMode, fileMode } = ctx.store.settings.get();
          const st = await withHooks(ctx, currentUser(request), reply, 'save', { file: r.real }, () =>
            writeFileAtomic(access, r, request.raw, {
              fileMode,
              dirMode,
              length: declaredLength(request.raw),
              stillAllowed: () => callerOf(ctx, request, ['modify']),
            }),
          );
          await notify(ctx, 'save', () => events.changed?.(r.real));
          void reply.header('ETag', etagOf(st));
          return sendStatus(reply, 200);
        } finally {
          await r.close();
        }
      },
    );

    app.delete(
      '/api/resources/*',
      {
        config: { reach: FILE_CHANGES, needs: 'delete', audit: fileAudit('file.delete') },
        schema: {
          summary: 'delete an item, or move it to the trash when the trash is on',
          params: PathParams,
          response: { 204: empty('deleted; X-Delete-Outcome says trash or permanent') },
        },
      },
      async (request, reply) => {
        const access = await accessOf(request);
        // A link is removed itself, never its target: even a link leading out of the scope can go.
        const r = await access.open(requestPath(request), { followFinal: false });
        try {
          if (r.virtual === '/') throw new AppError('forbidden');
          if (!r.linkStat) throw notFound();
          const user = currentUser(request);
          // With the trash on, a delete is a move into the user's trash (files/trash.ts).
          const trashed = await withHooks(ctx, user, reply, 'delete', { file: r.entry }, () =>
            deleteOrTrash(ctx, access, user, r),
          );
          void reply.header(DELETE_OUTCOME_HEADER, trashed ? 'trash' : 'permanent');
          audit(request, { detail: trashed ? 'to trash' : 'permanent' });
          if (trashed?.copied) void reply.header(TRASH_COPIED_HEADER, 'true');
        } finally {
          await r.close();
        }
        await notify(ctx, 'delete', () => sharesFollowDelete(ctx, access, r.entry));
        await notify(ctx, 'delete', async () => await davFollowDelete(ctx, access, r.entry));
        await notify(ctx, 'delete', () => events.deleted?.(r.entry));
        return sendStatus(reply, 204);
      },
    );

    const patchNeeds = (request: FastifyRequest) =>
      patchOperations(queryValue(request, 'action') ?? '', isTrue(queryValue(request, 'override')));

    app.patch(
      '/api/resources/*',
      {
        config: { reach: FILE_CHANGES, needs: patchNeeds, audit: patchAudit },
        schema: {
          summary: 'copy or move (rename) an item to `destination`',
          params: PathParams,
          querystring: ResourcePatchQuery,
          response: { 200: statusLine('done') },
        },
      },
      async (request, reply) => {
        const access = await accessOf(request);
        let destination: string;
        try {
          // Decoded twice, as File Browser does: clients encode the destination once more (contract 5.6).
          destination = decodeURIComponent(queryValue(request, 'destination') ?? '/');
        } catch {
          throw badRequest('the destination is not valid percent-encoding');
        }
        // Asked again before each entry lands: a copy can outlast its token or permission.
        const caller = await callerOf(ctx, request, patchNeeds(request) ?? []);
        // A rename with `rename=true` may have taken another name than the one asked for.
        const landed = await transfer(
          ctx,
          currentUser(request),
          access,
          {
            action: queryValue(request, 'action') ?? '',
            source: requestPath(request),
            destination,
            override: isTrue(queryValue(request, 'override')),
            rename: isTrue(queryValue(request, 'rename')),
          },
          events,
          reply,
          { stillAllowed: () => caller.now() },
        );
        audit(request, { destination: landed });
        return sendStatus(reply, 200);
      },
    );
  };
}

/** The recursive listing below a folder, opened (and released) by the walk itself. */
async function* walkFrom(access: FileAccess, virtual: string, signal: AbortSignal) {
  const root = await access.open(virtual, { rules: false });
  try {
    if (root.node?.stat.isDirectory()) yield* recursiveEntries(access, root.node, root.virtual, signal);
  } finally {
    await root.close();
  }
}

/** Streams `[entry,entry,...]` from an async iterator, in batches, ending it when the stream ends. */
async function* jsonArrayStream<T>(entries: AsyncGenerator<T>): AsyncGenerator<string> {
  try {
    yield '[';
    let sep = '';
    let batch = '';
    for await (const entry of entries) {
      batch += sep + JSON.stringify(entry);
      sep = ',';
      if (batch.length > 64 * 1024) {
        yield batch;
        batch = '';
      }
    }
    yield batch + ']';
  } finally {
    await entries.return(undefined);
  }
}
