import { useLayoutEffect, useRef } from 'react';

/**
 * Hears key presses on the window with the handler of the latest render. Both the listener and
 * the handler are set during the commit (layout effects): a key pressed the moment new content
 * shows acts on that content, never on the handler of the render before, which a passive effect
 * still waiting to run would otherwise leave in place on a busy machine.
 */
export function useWindowKeyDown(handler: (event: KeyboardEvent) => void, enabled = true): void {
  const latest = useRef(handler);
  useLayoutEffect(() => {
    latest.current = handler;
  });
  useLayoutEffect(() => {
    if (!enabled) return;
    const onKeyDown = (event: KeyboardEvent) => latest.current(event);
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [enabled]);
}
