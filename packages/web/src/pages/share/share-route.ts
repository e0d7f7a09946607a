import { encodePath } from '../../utils/paths';

/** The first segment of a /share/* route is the link's hash; the rest is a path below the share. */
export function parseShareSplat(splat: string | undefined): { hash: string; path: string } {
  const rest = (splat ?? '').replace(/^\/+/, '');
  const slash = rest.indexOf('/');
  if (slash === -1) return { hash: rest, path: '/' };
  return { hash: rest.slice(0, slash), path: rest.slice(slash).replace(/\/{2,}/g, '/') };
}

/** The client route of a path inside a share; folders end with a slash. */
export function shareRoute(hash: string, path: string, isDir: boolean): string {
  const clean = path.startsWith('/') ? path : `/${path}`;
  const withSlash = isDir && !clean.endsWith('/') ? `${clean}/` : clean;
  return `/share/${encodeURIComponent(hash)}${encodePath(withSlash)}`;
}

/** Items shown at first, and how many more each '+N' tile adds. */
export const SHARE_PAGE_SIZE = 100;
