import { useEffect, useRef } from 'react';

/**
 * The in-app route a click on `anchor` would open, or null when the click is not a plain
 * same-tab navigation inside this app (another origin, a new tab, a download, a modifier key).
 */
export function internalRoute(
  anchor: HTMLAnchorElement,
  event: Pick<MouseEvent, 'button' | 'ctrlKey' | 'metaKey' | 'shiftKey' | 'altKey'>,
  location: Pick<Location, 'origin' | 'pathname' | 'search' | 'hash'>,
  baseURL: string,
): string | null {
  if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return null;
  if (anchor.hasAttribute('download')) return null;
  const target = anchor.getAttribute('target');
  if (target && target !== '_self') return null;
  const href = anchor.getAttribute('href');
  if (href === null || href.startsWith('#')) return null;
  let url: URL;
  try {
    url = new URL(href, `${location.origin}${location.pathname}`);
  } catch {
    return null;
  }
  if (url.origin !== location.origin) return null;
  if (baseURL && url.pathname !== baseURL && !url.pathname.startsWith(`${baseURL}/`)) return null;
  if (url.pathname === location.pathname && url.search === location.search) return null;
  const path = baseURL ? url.pathname.slice(baseURL.length) || '/' : url.pathname;
  return `${path}${url.search}${url.hash}`;
}

/**
 * While `active`, leaving is held back: closing or reloading the tab gets the browser's own
 * warning, and a click on a link inside the app goes to `onLeave` with its route instead of
 * navigating. (The router is not a data router, so its blocker is not available.)
 */
export function useLeaveGuard(active: boolean, baseURL: string, onLeave: (route: string) => void): void {
  const leave = useRef(onLeave);
  leave.current = onLeave;

  useEffect(() => {
    if (!active) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers show the warning only when returnValue is set.
      event.returnValue = '';
    };
    const onClick = (event: MouseEvent) => {
      if (event.defaultPrevented || !(event.target instanceof Element)) return;
      const anchor = event.target.closest('a');
      if (!anchor) return;
      const route = internalRoute(anchor, event, window.location, baseURL);
      if (route === null) return;
      event.preventDefault();
      event.stopPropagation();
      leave.current(route);
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    // Capture phase: the router's own link handler must not see the click.
    window.addEventListener('click', onClick, true);
    return () => {
      window.removeEventListener('beforeunload', onBeforeUnload);
      window.removeEventListener('click', onClick, true);
    };
  }, [active, baseURL]);
}
