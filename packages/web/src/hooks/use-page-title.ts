import { useEffect } from 'react';
import { create } from 'zustand';
import { instanceName } from '../startup';

/** The screen's name, read by the layout's level-one heading. */
export const usePageTitleStore = create<{ screen: string }>()(() => ({ screen: '' }));

/**
 * Sets the tab title to "<screen> - <instance name>" and names the page's level-one heading
 * after the screen, so both say the same thing to a screen reader.
 */
export function usePageTitle(screen: string): void {
  useEffect(() => {
    document.title = screen ? `${screen} - ${instanceName()}` : instanceName();
    usePageTitleStore.setState({ screen });
  }, [screen]);
}
