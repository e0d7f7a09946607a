import { FileInfo, MEDIA, PathParams, PublicShareQuery, SHARE_PASSWORD_HEADER } from '@filebrowser/contract';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AuditAction } from '@filebrowser/contract';
import { credentialRefused, type AuditDeclaration } from '../../audit/http.js';
import type { ServerContext } from '../../services.js';
import { isSpecial, openPinnedFile } from '../../files/access/anchor.js';
import { PublicShares, type OpenedShare } from '../../shares/public.js';
import { downloadAnswers, TO_FOLDER } from '../openapi/declare.js';
import { NO_HEAD } from '../raw/routes.js';
import { OPEN, SHARE_LINK } from '../reach.js';
import { sendArchive } from '../raw/send-archive.js';
import { contentDisposition, sendFile } from '../raw/send-file.js';
import { headerValue, queryValue, redirectToFolder, requestPath } from '../resources/request-path.js';

/** `/{hash}/rest/of/path` → the hash and the path below the share (trailing "/" kept). */
function splitSharePath(p: string): { hash: string; subpath: string } {
  const rest = p.replace(/^\/+/, '');
  const slash = rest.indexOf('/');
  return slash === -1
    ? { hash: rest, subpath: '/' }
    : { hash: rest.slice(0, slash), subpath: rest.slice(slash) };
}

/**
 * Public share links (contract 8.5): no sign-in; the link, its password (or the short-lived token
 * the password earned) and the owner's live rights are checked on every request.
 */
/** A visit of a public link: the share's hash and the path below what it shares. */
const visit =
  (action: AuditAction): AuditDeclaration =>
  (request) => {
    const { hash, subpath } = splitSharePath(requestPath(request));
    return { action, path: subpath, detail: hash };
  };

export function publicShareRoutes(ctx: ServerContext): FastifyPluginAsync {
  const shares = new PublicShares(ctx);

  const openShare = async (request: FastifyRequest): Promise<{ opened: OpenedShare; subpath: string }> => {
    const { hash, subpath } = splitSharePath(requestPath(request));
    const opened = await shares.open({
      hash,
      token: queryValue(request, 'token'),
      password: headerValue(request, SHARE_PASSWORD_HEADER.toLowerCase()),
      ip: request.ip,
      onWrongPassword: () =>
        credentialRefused(ctx, request, {
          username: `share:${hash}`,
          status: 401,
          via: 'share password',
        }),
    });
    return { opened, subpath };
  };

  return async (app) => {
    for (const prefix of ['/api/public/share', '/api/public/dl']) {
      app.get(
        prefix,
        { exposeHeadRoute: false, config: { reach: OPEN }, schema: { response: TO_FOLDER } },
        async (request, reply) => redirectToFolder(request, reply),
      );
      // GET only, as the old server routed them.
      app.head(
        `${prefix}/*`,
        { config: { reach: OPEN }, schema: { params: PathParams, response: { 405: NO_HEAD } } },
        async (_request, reply) => reply.code(405).send(),
      );
    }

    app.get(
      '/api/public/share/*',
      {
        exposeHeadRoute: false,
        config: { reach: SHARE_LINK, audit: visit('share.access') },
        schema: {
          summary: 'what a share link shows: {hash}{path below it}; X-SHARE-PASSWORD when it has one',
          tags: ['public share'],
          params: PathParams,
          querystring: PublicShareQuery,
          response: { 200: FileInfo },
          // Built in Go's field order, which the schema serializer would change.
        },
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      async (request) => {
        const { opened, subpath } = await openShare(request);
        try {
          return await shares.info(opened, subpath);
        } finally {
          await opened.close();
        }
      },
    );

    app.get(
      '/api/public/dl/*',
      {
        exposeHeadRoute: false,
        config: { reach: SHARE_LINK, audit: visit('share.download') },
        schema: {
          summary: 'download through a share link: {hash}{path below it}',
          tags: ['public share'],
          params: PathParams,
          querystring: PublicShareQuery,
          response: downloadAnswers('the file as stored, or the archive', MEDIA.file),
        },
      },
      async (request, reply) => {
        const { opened, subpath } = await openShare(request);
        try {
          const { access, item, own } = await shares.select(opened, subpath);
          try {
            const inline = queryValue(request, 'inline') === 'true';
            const stat = item.stat!;
            if (isSpecial(stat) || !item.node) {
              // Named pipes, sockets and devices are never opened.
              void reply.header('Content-Disposition', contentDisposition(item.name, inline));
              return reply.code(200).send();
            }
            if (!stat.isDirectory()) {
              return await sendFile(request, reply, await openPinnedFile(item.node), {
                name: item.name,
                inline,
              });
            }
            // The archive opens what it reads itself, as the client takes it.
            return await sendArchive(ctx, request, reply, access, item.virtual, {
              caller: shares.visitor(opened),
              signedIn: false,
            });
          } finally {
            if (own) await item.close();
          }
        } finally {
          await opened.close();
        }
      },
    );
  };
}
