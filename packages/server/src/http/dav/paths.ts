import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError, badRequest } from '../../errors.js';

/** Where WebDAV is served below the base URL. */
export const DAV_MOUNT = '/dav';

/** The public path of the WebDAV root, base URL included (`/fb/dav`). */
export function davPrefix(ctx: AppContext): string {
  return ctx.config.baseURL + DAV_MOUNT;
}

/** The href of a virtual path: each segment percent-encoded, folders ending with `/`. */
export function hrefOf(prefix: string, virtual: string, isDir: boolean): string {
  if (virtual === '/') return prefix + '/';
  const encoded = virtual
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
  return prefix + encoded + (isDir ? '/' : '');
}

function decodePath(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw badRequest('the path is not valid percent-encoding');
  }
}

/** The virtual path a request names below `/dav` (still to be canonicalised by the resolver). */
export function requestVirtual(request: FastifyRequest): string {
  const pathname = request.url.split('?')[0] ?? '/';
  return decodePath(pathname.slice(DAV_MOUNT.length)) || '/';
}

/**
 * The virtual path a URL (absolute, or an absolute path) names below this server's WebDAV root,
 * or undefined when it names something else: another host or scheme, or a place outside `/dav/`.
 */
export function virtualOfUrl(ctx: AppContext, request: FastifyRequest, value: string): string | undefined {
  let pathname: string;
  if (value.startsWith('/')) {
    pathname = value.split(/[?#]/)[0]!;
  } else {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return undefined;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    const host = (request.headers.host ?? '').toLowerCase();
    if (url.host.toLowerCase() !== host) return undefined;
    pathname = url.pathname;
  }
  const prefix = davPrefix(ctx);
  if (pathname !== prefix && !pathname.startsWith(prefix + '/')) return undefined;
  return decodePath(pathname.slice(prefix.length)) || '/';
}

/**
 * The `Destination` of a COPY or MOVE as a virtual path: one on another host or outside this
 * WebDAV root is a resource this server cannot write, 502 Bad Gateway (RFC 4918 9.8.5).
 */
export function destinationVirtual(ctx: AppContext, request: FastifyRequest): string {
  const raw = request.headers.destination;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (!value) throw badRequest('a Destination header is required');
  const virtual = virtualOfUrl(ctx, request, value.trim());
  if (virtual === undefined) {
    throw new AppError('bad_gateway', 'the Destination is not on this WebDAV server');
  }
  return virtual;
}
