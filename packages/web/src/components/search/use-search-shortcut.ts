import { isSearchShortcut, openSearch } from './open-search';
import { useWindowKeyDown } from '../../hooks/use-window-key-down';

/**
 * Ctrl/Cmd+F opens the search overlay (over `routePath`, the virtual path of the /files route) instead of the browser's find bar. A handler that got the
 * key first (the editor's own find panel) wins: it marks the event as handled.
 */
export function useSearchShortcut(routePath: string, enabled = true): void {
  useWindowKeyDown((event) => {
    if (event.defaultPrevented || !isSearchShortcut(event)) return;
    if (openSearch(routePath)) event.preventDefault();
  }, enabled);
}
