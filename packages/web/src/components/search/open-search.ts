import { useFilesStore } from '../../stores/files';
import { selectCurrentPrompt, useLayoutStore } from '../../stores/layout';

/**
 * Opens the search overlay over the folder on screen (a file's parent when a file is open).
 * Returns false when another prompt is in the way; when search is already open it keeps it.
 */
export function openSearch(): boolean {
  const layout = useLayoutStore.getState();
  const current = selectCurrentPrompt(layout);
  if (current?.name === 'search') return true;
  if (current) return false;
  layout.openPrompt('search', { dir: useFilesStore.getState().currentFolder ?? '/' });
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
