import { useCallback, useSyncExternalStore } from 'react';

/** The width at or below which the file browser switches to its phone layout. */
export const NARROW_QUERY = '(max-width: 736px)';

export function useMediaQuery(query: string): boolean {
  const subscribe = useCallback(
    (onChange: () => void) => {
      if (typeof window.matchMedia !== 'function') return () => undefined;
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    [query],
  );
  const snapshot = () => typeof window.matchMedia === 'function' && window.matchMedia(query).matches;
  return useSyncExternalStore(subscribe, snapshot, () => false);
}

export const useIsNarrow = (): boolean => useMediaQuery(NARROW_QUERY);
