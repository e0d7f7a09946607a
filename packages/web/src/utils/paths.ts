/** Percent-encodes each segment of a virtual path, keeping its slashes. */
export function encodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

/** Joins a folder path and a child name with exactly one slash between them. */
export function joinPath(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, '')}/${name.replace(/^\/+/, '')}`;
}

/** Drops trailing slashes so that "/a/" and "/a" compare equal; the root stays "/". */
export function trimTrailingSlash(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/** The virtual path a /files/* route points at ("" and undefined are the root). */
export function resourcePathFromSplat(splat: string | undefined): string {
  const path = `/${splat ?? ''}`;
  return path.replace(/\/{2,}/g, '/');
}

/** The client route of a virtual path in the file browser. */
export function filesRoute(path: string, isDir: boolean): string {
  const clean = path.startsWith('/') ? path : `/${path}`;
  const withSlash = isDir && !clean.endsWith('/') ? `${clean}/` : clean;
  return `/files${encodePath(withSlash)}`;
}

/** The parent folder of a virtual path, with a trailing slash. */
export function parentPath(path: string): string {
  const trimmed = trimTrailingSlash(path);
  const index = trimmed.lastIndexOf('/');
  return index <= 0 ? '/' : `${trimmed.slice(0, index)}/`;
}
