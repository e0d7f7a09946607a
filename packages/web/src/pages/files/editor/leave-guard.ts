import { useEffect, useRef } from 'react';
import { useBlocker } from 'react-router';

/**
 * While `active`, leaving is held back: closing or reloading the tab gets the browser's own
 * warning, and every navigation inside the app (a link, the Back button, a script) waits for
 * `ask`. It is given `leave`, which lets the navigation through, and `stay`, which cancels it;
 * exactly one of them must be called.
 */
export function useLeaveGuard(active: boolean, ask: (leave: () => void, stay: () => void) => void): void {
  const asker = useRef(ask);
  asker.current = ask;
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      active &&
      (currentLocation.pathname !== nextLocation.pathname || currentLocation.search !== nextLocation.search),
  );

  useEffect(() => {
    if (blocker.state !== 'blocked') return;
    let settled = false;
    asker.current(
      () => {
        if (settled) return;
        settled = true;
        blocker.proceed();
      },
      () => {
        if (settled) return;
        settled = true;
        blocker.reset();
      },
    );
  }, [blocker]);

  useEffect(() => {
    if (!active) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers show the warning only when returnValue is set.
      event.returnValue = '';
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [active]);
}
