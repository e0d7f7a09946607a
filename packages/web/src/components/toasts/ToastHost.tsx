import { useTranslation } from 'react-i18next';
import { ISSUE_TRACKER_URL } from '../../constants';
import { startup } from '../../startup';
import { useToastStore, type Toast } from '../../stores/toasts';
import { Icon } from '../Icon';

function issueURL(message: string): string {
  const body = `**Version:** ${startup.Version}\n\n**Error:**\n\`\`\`\n${message}\n\`\`\``;
  return `${ISSUE_TRACKER_URL}?body=${encodeURIComponent(body)}`;
}

function ToastItem({ toast }: { toast: Toast }) {
  const { t } = useTranslation();
  const dismiss = useToastStore((state) => state.dismiss);
  const isError = toast.kind === 'error';
  return (
    <li className={`toast toast--${toast.kind}`} role={isError ? 'alert' : 'status'}>
      <Icon name={isError ? 'error_outline' : 'check_circle'} className="toast__icon" />
      <span className="toast__message">{toast.message}</span>
      {isError && !startup.DisableExternal && (
        <a className="toast__action" href={issueURL(toast.message)} target="_blank" rel="noopener noreferrer">
          {t('buttons.reportIssue')}
        </a>
      )}
      <button
        type="button"
        className="icon-button toast__close"
        aria-label={t('buttons.dismiss')}
        onClick={() => dismiss(toast.id)}
      >
        <Icon name="close" />
      </button>
    </li>
  );
}

/** Messages at the bottom centre: successes fade after 4 s, errors stay until dismissed. */
export function ToastHost() {
  const toasts = useToastStore((state) => state.toasts);
  if (toasts.length === 0) return null;
  return (
    <ol className="toasts" aria-live="polite">
      {toasts.map((toast) => (
        <ToastItem key={toast.id} toast={toast} />
      ))}
    </ol>
  );
}
