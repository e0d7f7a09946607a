import { useEffect } from 'react';
import { isSearchShortcut, openSearch } from './open-search';

/**
 * Ctrl/Cmd+F opens the search overlay (over `routePath`, the virtual path of the /files route) instead of the browser's find bar. A handler that got the
 * key first (the editor's own find panel) wins: it marks the event as handled.
 */
export function useSearchShortcut(routePath: string, enabled = true): void {
  useEffect(() => {
    if (!enabled) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || !isSearchShortcut(event)) return;
      if (openSearch(routePath)) event.preventDefault();
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [routePath, enabled]);
}
