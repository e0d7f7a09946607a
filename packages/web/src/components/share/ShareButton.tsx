import { useTranslation } from 'react-i18next';
import { useAuthStore } from '../../stores/auth';
import { useLayoutStore } from '../../stores/layout';
import { Icon } from '../Icon';

interface ShareButtonProps {
  /** Virtual path of what to share; a folder path ends with "/" (the server keeps it that way). */
  path: string;
  className?: string;
}

/**
 * Opens the share prompt for one path. Self-contained so that any action bar can place it;
 * drawn only for users with the share and download permissions.
 */
export function ShareButton({ path, className = 'icon-button' }: ShareButtonProps) {
  const { t } = useTranslation();
  // A link is a download handed to someone else: it takes both permissions, as on the server.
  const canShare = useAuthStore((state) => !!state.user?.perm.share && !!state.user.perm.download);
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  if (!canShare) return null;
  return (
    <button
      type="button"
      className={className}
      aria-label={t('buttons.share')}
      title={t('buttons.share')}
      onClick={() => openPrompt('share', { path })}
    >
      <Icon name="share" />
    </button>
  );
}
