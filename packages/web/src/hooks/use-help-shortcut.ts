import { useAuthStore } from '../stores/auth';
import { useLayoutStore } from '../stores/layout';
import { useWindowKeyDown } from './use-window-key-down';

/** F1 opens the help prompt anywhere in the signed-in app (unless another prompt is open). */
export function useHelpShortcut(): void {
  useWindowKeyDown((event) => {
    if (event.key !== 'F1' || event.defaultPrevented) return;
    if (!useAuthStore.getState().user) return;
    const { prompts, openPrompt } = useLayoutStore.getState();
    event.preventDefault();
    if (prompts.length === 0) openPrompt('help', {});
  });
}
