import { useTranslation } from 'react-i18next';
import { useMatch } from 'react-router';
import { useAuthStore } from '../../stores/auth';
import { resourcePathFromSplat } from '../../utils/paths';
import { Icon } from '../Icon';
import { openSearch } from './open-search';
import '../../styles/search.css';
import { useSearchShortcut } from './use-search-shortcut';

/**
 * The header's search button, with the Ctrl/Cmd+F shortcut that goes with it: both exist only
 * for a signed-in user inside the file browser.
 */
export function SearchButton({ className = 'icon-button' }: { className?: string }) {
  const { t } = useTranslation();
  const signedIn = useAuthStore((state) => state.user !== null);
  const match = useMatch('/files/*');
  const routePath = resourcePathFromSplat(match?.params['*']);
  const available = signedIn && match !== null;
  useSearchShortcut(routePath, available);
  if (!available) return null;
  return (
    <button
      type="button"
      className={className}
      aria-label={t('search.open')}
      title={t('search.open')}
      aria-keyshortcuts="Control+F Meta+F"
      onClick={() => openSearch(routePath)}
    >
      <Icon name="search" />
    </button>
  );
}
