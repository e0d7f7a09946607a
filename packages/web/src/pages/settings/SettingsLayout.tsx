import { Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { NavLink, Outlet } from 'react-router';
import { Spinner } from '../../components/Spinner';
import { useUser } from '../../hooks/use-user';

export function SettingsLayout() {
  const { t } = useTranslation();
  const user = useUser();
  return (
    <div className="settings">
      <nav className="tabs" aria-label={t('settings.navigation')}>
        <NavLink to="/settings/profile" className="tabs__tab">
          {t('settings.profile.title')}
        </NavLink>
        {user.perm.share && (
          <NavLink to="/settings/shares" className="tabs__tab">
            {t('settings.shares.title')}
          </NavLink>
        )}
        {user.perm.admin && (
          <>
            <NavLink to="/settings/global" className="tabs__tab">
              {t('settings.global.title')}
            </NavLink>
            <NavLink to="/settings/users" className="tabs__tab">
              {t('settings.users.title')}
            </NavLink>
            <NavLink to="/settings/audit" className="tabs__tab">
              {t('settings.audit.title')}
            </NavLink>
            <NavLink to="/settings/locks" className="tabs__tab">
              {t('settings.locks.title')}
            </NavLink>
          </>
        )}
      </nav>
      <div className="settings__content">
        <Suspense fallback={<Spinner />}>
          <Outlet />
        </Suspense>
      </div>
    </div>
  );
}
