import type { ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { useLayoutStore } from '../../stores/layout';

/** Renders a page's actions into the header, for as long as the page is on screen. */
export function HeaderActions({ children }: { children: ReactNode }) {
  const slot = useLayoutStore((state) => state.headerSlot);
  return slot ? createPortal(children, slot) : null;
}
