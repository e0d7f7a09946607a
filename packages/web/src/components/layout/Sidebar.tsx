import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { NavLink, useMatch } from 'react-router';
import { instanceName, startup } from '../../startup';
import { canLogout, useAuthStore } from '../../stores/auth';
import { useFilesStore } from '../../stores/files';
import { selectCurrentPrompt, useLayoutStore } from '../../stores/layout';
import { Icon } from '../Icon';
import { UsageBar } from './UsageBar';

function SidebarLink({
  to,
  icon,
  children,
  state,
}: {
  to: string;
  icon: string;
  children: ReactNode;
  state?: unknown;
}) {
  return (
    <NavLink to={to} state={state} className="sidebar__action">
      <Icon name={icon} />
      <span>{children}</span>
    </NavLink>
  );
}

function SidebarButton({
  icon,
  onClick,
  children,
}: {
  icon: string;
  onClick: () => void;
  children: ReactNode;
}) {
  return (
    <button type="button" className="sidebar__action" onClick={onClick}>
      <Icon name={icon} />
      <span>{children}</span>
    </button>
  );
}

export function Sidebar() {
  const { t } = useTranslation();
  const user = useAuthStore((state) => state.user);
  const logout = useAuthStore((state) => state.logout);
  const open = useLayoutStore((state) => selectCurrentPrompt(state)?.name === 'sidebar');
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  const closeAllPrompts = useLayoutStore((state) => state.closeAllPrompts);
  const currentFolder = useFilesStore((state) => state.currentFolder);
  const onFilesPage = useMatch('/files/*') !== null;
  // Outside the file browser there is no folder on screen: new entries go to the scope root.
  const base = onFilesPage && currentFolder ? currentFolder : '/';

  const openFromSidebar = (name: 'newDir' | 'newFile' | 'help') => {
    closeAllPrompts();
    if (name === 'help') openPrompt('help', {});
    else openPrompt(name, { base });
  };

  return (
    <nav className={open ? 'sidebar sidebar--open' : 'sidebar'} aria-label={t('sidebar.label')}>
      {user ? (
        <>
          <div className="sidebar__group">
            <SidebarLink to="/files/" icon="folder">
              {t('sidebar.myFiles')}
            </SidebarLink>
            {user.perm.create && (
              <>
                <SidebarButton icon="create_new_folder" onClick={() => openFromSidebar('newDir')}>
                  {t('sidebar.newFolder')}
                </SidebarButton>
                <SidebarButton icon="note_add" onClick={() => openFromSidebar('newFile')}>
                  {t('sidebar.newFile')}
                </SidebarButton>
              </>
            )}
            <SidebarLink to="/trash" icon="delete">
              {t('sidebar.trash')}
            </SidebarLink>
          </div>
          <div className="sidebar__group">
            <SidebarLink to="/settings" icon="settings_applications">
              {t('sidebar.settings')}
            </SidebarLink>
            {canLogout() && (
              <SidebarButton icon="exit_to_app" onClick={() => logout('user')}>
                {t('sidebar.logout')}
              </SidebarButton>
            )}
            <SidebarButton icon="help" onClick={() => openFromSidebar('help')}>
              {t('sidebar.help')}
            </SidebarButton>
          </div>
          {onFilesPage && currentFolder && !startup.DisableUsedPercentage && (
            <UsageBar path={currentFolder} />
          )}
        </>
      ) : (
        <div className="sidebar__group">
          <SidebarLink to="/login" icon="exit_to_app">
            {t('sidebar.login')}
          </SidebarLink>
          {startup.Signup && (
            <SidebarLink to="/login" icon="person_add" state={{ signup: true }}>
              {t('sidebar.signup')}
            </SidebarLink>
          )}
        </div>
      )}
      <p className="sidebar__credits">
        {instanceName()} {startup.Version}
      </p>
    </nav>
  );
}
