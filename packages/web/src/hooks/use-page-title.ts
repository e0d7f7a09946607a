import { useEffect } from 'react';
import { instanceName } from '../startup';

/** Sets the tab title to "<screen> - <instance name>". */
export function usePageTitle(screen: string): void {
  useEffect(() => {
    document.title = screen ? `${screen} - ${instanceName()}` : instanceName();
  }, [screen]);
}
