import type { FileItem } from '@filebrowser/contract';

/**
 * Types stepped through with previous/next. Text files open the editor and folders a listing,
 * so stepping skips them, as the original client did.
 */
const STEPPABLE = new Set(['image', 'video', 'audio', 'pdf', 'blob']);

export function isSteppable(item: Pick<FileItem, 'isDir' | 'type'>): boolean {
  return !item.isDir && STEPPABLE.has(item.type);
}

export interface Neighbours<T> {
  previous: T | null;
  next: T | null;
}

/**
 * The closest steppable entries before and after `path` in the folder's order (the listing's
 * sort). No wrap-around: the ends of the folder are the ends of the walk.
 */
export function findNeighbours<T extends Pick<FileItem, 'path' | 'isDir' | 'type'>>(
  items: readonly T[],
  path: string,
): Neighbours<T> {
  const index = items.findIndex((item) => item.path === path);
  if (index < 0) return { previous: null, next: null };
  let previous: T | null = null;
  for (let i = index - 1; i >= 0; i--) {
    const item = items[i]!;
    if (isSteppable(item)) {
      previous = item;
      break;
    }
  }
  let next: T | null = null;
  for (let i = index + 1; i < items.length; i++) {
    const item = items[i]!;
    if (isSteppable(item)) {
      next = item;
      break;
    }
  }
  return { previous, next };
}
