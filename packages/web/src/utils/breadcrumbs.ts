export interface Crumb {
  /** The segment name, or "..." for the entry standing in for trimmed segments. */
  name: string;
  /** Virtual path of the segment; folders end with a slash. */
  path: string;
}

export const MAX_VISIBLE_CRUMBS = 3;
export const TRIMMED_CRUMB = '...';

/** One crumb per segment of a virtual path; every crumb but a trailing file is a folder. */
export function buildBreadcrumbs(path: string, lastIsDir = true): Crumb[] {
  const segments = path.split('/').filter(Boolean);
  let current = '';
  return segments.map((name, index) => {
    current += `/${name}`;
    const isFolder = lastIsDir || index < segments.length - 1;
    return { name, path: isFolder ? `${current}/` : current };
  });
}

/**
 * Keeps the last segments visible; longer paths start with a "..." crumb that leads to the
 * folder just above the visible ones.
 */
export function trimBreadcrumbs(crumbs: Crumb[], max: number = MAX_VISIBLE_CRUMBS): Crumb[] {
  if (crumbs.length <= max) return crumbs;
  const hidden = crumbs[crumbs.length - max - 1];
  const visible = crumbs.slice(-max);
  return hidden ? [{ name: TRIMMED_CRUMB, path: hidden.path }, ...visible] : visible;
}
