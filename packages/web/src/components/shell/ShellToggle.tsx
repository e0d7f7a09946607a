import { useTranslation } from 'react-i18next';
import { useShellStore } from '../../stores/shell';
import { Icon } from '../Icon';
import { SHELL_PANEL_ID, useShellAvailable } from './use-shell-available';

/** The top-bar button that opens and closes the shell panel; absent when the shell is not available. */
export function ShellToggle({ className = 'icon-button' }: { className?: string }) {
  const { t } = useTranslation();
  const available = useShellAvailable();
  const open = useShellStore((state) => state.open);
  const toggle = useShellStore((state) => state.toggle);
  if (!available) return null;
  return (
    <button
      type="button"
      className={className}
      aria-label={t('shell.toggle')}
      title={t('shell.toggle')}
      aria-pressed={open}
      aria-controls={open ? SHELL_PANEL_ID : undefined}
      onClick={toggle}
    >
      <Icon name="code" />
    </button>
  );
}
