import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Icon } from '../../components/Icon';
import { buildBreadcrumbs, TRIMMED_CRUMB, trimBreadcrumbs } from '../../utils/breadcrumbs';
import { filesRoute } from '../../utils/paths';

export function Breadcrumbs({ path, isDir }: { path: string; isDir: boolean }) {
  const { t } = useTranslation();
  const crumbs = trimBreadcrumbs(buildBreadcrumbs(path, isDir));
  return (
    <nav className="breadcrumbs" aria-label={t('files.breadcrumbs')}>
      <ol>
        <li>
          <Link
            to="/files/"
            aria-label={t('files.home')}
            aria-current={crumbs.length === 0 ? 'page' : undefined}
          >
            <Icon name="home" />
          </Link>
        </li>
        {crumbs.map((crumb, index) => (
          <li key={crumb.path}>
            <Icon name="chevron_right" className="breadcrumbs__separator" />
            <Link
              to={filesRoute(crumb.path, crumb.path.endsWith('/'))}
              aria-current={index === crumbs.length - 1 ? 'page' : undefined}
              title={crumb.name === TRIMMED_CRUMB ? t('files.parentFolders') : undefined}
            >
              {crumb.name}
            </Link>
          </li>
        ))}
      </ol>
    </nav>
  );
}
