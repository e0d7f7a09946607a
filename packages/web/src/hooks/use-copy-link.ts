import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { showError, showSuccess } from '../stores/toasts';
import { copyToClipboard } from '../utils/clipboard';

/**
 * Copies a link and says so: "link copied" on success; when the clipboard still refuses after the
 * retry (with permission asked), an error that shows the link so it can be copied by hand.
 */
export function useCopyLink(): (link: string) => Promise<void> {
  const { t } = useTranslation();
  return useCallback(
    async (link: string) => {
      try {
        await copyToClipboard(link);
        showSuccess(t('settings.shares.linkCopied'));
      } catch {
        showError(t('share.copyFailed', { link }));
      }
    },
    [t],
  );
}
