import { useFilesStore } from '../../stores/files';
import { selectCurrentPrompt, useLayoutStore } from '../../stores/layout';
import { parentPath, trimTrailingSlash } from '../../utils/paths';

/**
 * The folder to search, from the file browser's route path: a path with a trailing slash is a
 * folder (the app's links always give folders one); one without is a file, so its parent,
 * unless the page has loaded it as a folder (a hand-typed address).
 */
export function searchFolder(routePath: string, loadedFolder: string | null): string {
  if (routePath.endsWith('/')) return routePath;
  if (loadedFolder !== null && trimTrailingSlash(loadedFolder) === routePath) return `${routePath}/`;
  return parentPath(routePath);
}

/**
 * Opens the search overlay over the folder on screen (a file's parent when a file is open).
 * Returns false when another prompt is in the way; when search is already open it keeps it.
 */
export function openSearch(routePath: string): boolean {
  const layout = useLayoutStore.getState();
  const current = selectCurrentPrompt(layout);
  if (current?.name === 'search') return true;
  if (current) return false;
  layout.openPrompt('search', { dir: searchFolder(routePath, useFilesStore.getState().currentFolder) });
  return true;
}

/** Ctrl+F on Windows and Linux, Cmd+F on a Mac; Shift and Alt combinations stay the browser's. */
export function isSearchShortcut(
  event: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey'>,
): boolean {
  return (
    (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === 'f'
  );
}
