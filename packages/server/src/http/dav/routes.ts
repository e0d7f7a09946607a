import { MEDIA, PathParams, StatusText } from '@filebrowser/contract';
import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
} from 'fastify';
import type { AuditAction } from '@filebrowser/contract';
import type { AuditDeclaration } from '../../audit/http.js';
import type { ServerContext } from '../../services.js';
import { AppError } from '../../errors.js';
import { fileAccessFor } from '../../files/access/access.js';
import type { FileEvents } from '../../files/change/events.js';
import { LockedError } from '../../files/change/locks.js';
import { empty, raw, rawBody } from '../openapi/declare.js';
import { currentUser } from '../guards.js';
import { FILE_CHANGES, FILES, OPEN } from '../reach.js';
import { evaluateIf, handleLock, handleUnlock, lockRootsXml } from './locks.js';
import { DAV_MOUNT, davPrefix, destinationVirtual, requestVirtual } from './paths.js';
import { handlePropfind, handleProppatch } from './props.js';
import { handleGet } from './read.js';
import type { DavRequest } from './request.js';
import { handleCopyMove, handleDelete, handleMkcol, handlePut } from './write.js';
import { DavError } from './xml.js';

/** Methods of RFC 4918 that HTTP does not have: the router must be told about them. */
const EXTENSION_METHODS = ['PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'] as const;

const METHODS = ['OPTIONS', 'GET', 'HEAD', 'PUT', 'DELETE', ...EXTENSION_METHODS];

/**
 * The methods by what their callers reach: OPTIONS takes no credential (clients probe with it);
 * the reading ones are open to read-only tokens; the rest change files or locks.
 */
const METHOD_REACH = [
  { methods: ['OPTIONS'], reach: OPEN },
  { methods: ['GET', 'HEAD', 'PROPFIND'], reach: FILES },
  { methods: ['PUT', 'DELETE', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'], reach: FILE_CHANGES },
] as const;

/** Registers the WebDAV methods with Fastify; must run on the root instance before routes are added. */
export function addDavMethods(app: FastifyInstance): void {
  const known = new Set(app.supportedMethods);
  for (const m of EXTENSION_METHODS) if (!known.has(m)) app.addHttpMethod(m, { hasBody: true });
}

async function dispatch(dav: DavRequest) {
  switch (dav.request.method) {
    case 'GET':
    case 'HEAD':
      return handleGet(dav);
    case 'PROPFIND':
      return handlePropfind(dav);
    case 'PROPPATCH':
      return handleProppatch(dav);
    case 'PUT':
      return handlePut(dav);
    case 'MKCOL':
      return handleMkcol(dav);
    case 'DELETE':
      return handleDelete(dav);
    case 'COPY':
      return handleCopyMove(dav, false);
    case 'MOVE':
      return handleCopyMove(dav, true);
    case 'LOCK':
      return handleLock(dav);
    case 'UNLOCK':
      return handleUnlock(dav);
    default:
      throw new AppError('method_not_allowed');
  }
}

/** One handler takes every method, so one declaration describes them all. */
const DAV_SCHEMA: FastifySchema = {
  summary: 'WebDAV (RFC 4918 class 1 and 2) on the user’s scope: Basic auth, password or API token',
  tags: ['webdav'],
  readBody: rawBody(
    'a file’s bytes (PUT) or an XML request (PROPFIND, PROPPATCH, LOCK)',
    MEDIA.archive,
    MEDIA.xml,
  ),
  response: {
    200: raw('a file (GET), a lock (LOCK), or nothing (OPTIONS)', MEDIA.file),
    201: raw('made (PUT, MKCOL, COPY, MOVE); a LOCK of an unmapped URL answers its lock', MEDIA.xml),
    204: empty('done'),
    206: raw('the requested range of a file', MEDIA.file, 'multipart/byteranges'),
    207: raw('multi-status', MEDIA.xml),
    304: empty('not modified'),
    default: {
      description: 'an error: a status line, or a WebDAV error document',
      content: { [MEDIA.text]: { schema: StatusText }, [MEDIA.xml]: { schema: {} } },
    },
  },
};

/**
 * WebDAV's writes as audit records. Reads, PROPFIND and locks are not recorded: clients lock and
 * list constantly, and a lock changes nothing on disk.
 */
function davAudit(ctx: ServerContext): AuditDeclaration {
  return (request, reply) => {
    const writes: Record<string, AuditAction> = {
      PUT: reply.statusCode === 204 ? 'file.modify' : 'file.upload',
      MKCOL: 'file.create',
      DELETE: 'file.delete',
      PROPPATCH: 'file.props',
      COPY: 'file.copy',
      MOVE: 'file.move',
    };
    // A LOCK of an unmapped URL makes an empty file there (201): an upload like a PUT's.
    if (reply.statusCode === 201) writes.LOCK = 'file.upload';
    let action = writes[request.method];
    if (!action) return undefined;
    let path: string;
    try {
      path = requestVirtual(request);
    } catch {
      path = request.url;
    }
    if (action !== 'file.copy' && action !== 'file.move') return { action, path, detail: 'dav' };
    let destination: string;
    try {
      destination = destinationVirtual(ctx, request);
    } catch {
      destination = String(request.headers.destination ?? '');
    }
    const parent = (p: string) => p.replace(/\/+$/, '').replace(/\/[^/]*$/, '') || '/';
    if (action === 'file.move' && parent(path) === parent(destination)) action = 'file.rename';
    return { action, path, destination, detail: 'dav' };
  };
}

/**
 * WebDAV (RFC 4918 class 1 and 2) at `{baseURL}/dav/`: the signed-in user's scope, through the
 * same file access, permission policy, rules, hooks and share bookkeeping as the web API.
 */
export function davRoutes(ctx: ServerContext, events: FileEvents = {}): FastifyPluginAsync {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    if (ctx.store.settings.get().webdav === 'off') throw new AppError('not_found', 'WebDAV is turned off');
    if (request.method === 'OPTIONS') {
      return reply
        .code(200)
        .header('DAV', '1, 2')
        .header('MS-Author-Via', 'DAV')
        .header('Allow', METHODS.join(', '))
        .header('Content-Length', '0')
        .send();
    }
    // Signed in by the route's guard, with WebDAV's credentials (http/guards.ts).
    const user = currentUser(request);
    if (ctx.store.settings.get().webdav === 'per-user' && !user.webdav) {
      throw new AppError('forbidden', 'WebDAV is not enabled for this account');
    }
    // The tokens the If header submits: the file access honours its user's locks for them only.
    const submitted = new Set<string>();
    const dav: DavRequest = {
      ctx,
      events,
      request,
      reply,
      user,
      access: await fileAccessFor(ctx, user, undefined, submitted),
      prefix: davPrefix(ctx),
      virtual: requestVirtual(request),
      submitted,
      ifFailed: false,
    };
    try {
      await evaluateIf(dav);
      // A false If header fails the request before anything else (RFC 4918 10.4.1), locks included.
      if (dav.ifFailed) {
        throw new AppError('precondition_failed', 'the If header does not hold');
      }
      return await dispatch(dav);
    } catch (caught) {
      // A lock in the way of a write (files/locks.ts) names the locked resources (RFC 4918 9.10.6).
      const err =
        caught instanceof LockedError
          ? new DavError('locked', lockRootsXml(dav, caught.places), caught.message)
          : caught;
      if (!(err instanceof DavError) || reply.sent) throw err;
      return reply.code(err.status).type('application/xml; charset=utf-8').send(err.body());
    }
  };

  return async (app) => {
    // Bodies are file contents or small XML documents, both read from the raw request by the handlers.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    for (const url of [DAV_MOUNT, `${DAV_MOUNT}/*`]) {
      const schema = { ...DAV_SCHEMA, ...(url.endsWith('*') && { params: PathParams }) };
      for (const { methods, reach } of METHOD_REACH) {
        app.route({
          method: [...methods],
          url,
          exposeHeadRoute: false,
          schema,
          handler,
          config: { reach, credentials: 'webdav', audit: davAudit(ctx) },
        });
      }
    }
  };
}
