import { useEffect } from 'react';
import { useLocation } from 'react-router';
import { useLayoutStore } from '../stores/layout';

/** Closes prompts (and the sidebar drawer) whenever the page changes. */
export function RouterEffects() {
  const { pathname } = useLocation();
  const closeAllPrompts = useLayoutStore((state) => state.closeAllPrompts);

  useEffect(() => {
    closeAllPrompts();
  }, [pathname, closeAllPrompts]);

  return null;
}
