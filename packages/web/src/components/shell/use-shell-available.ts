import { startup } from '../../startup';
import { useAuthStore } from '../../stores/auth';

/**
 * Whether the shell may be offered: the server runs commands (start-up `EnableExec`), someone is
 * signed in, and they have the execute permission. The server checks all of it again, and the
 * command allow-list, before it reads a command.
 */
export function useShellAvailable(): boolean {
  const user = useAuthStore((state) => state.user);
  return startup.EnableExec && user !== null && user.perm.execute;
}

/** The id of the panel, which the toggle button controls. */
export const SHELL_PANEL_ID = 'shell-panel';
