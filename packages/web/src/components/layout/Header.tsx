import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { instanceName, logoURL } from '../../startup';
import { useLayoutStore } from '../../stores/layout';
import { Icon } from '../Icon';

export function Header() {
  const { t } = useTranslation();
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  const loading = useLayoutStore((state) => state.loading);
  const setHeaderSlot = useLayoutStore((state) => state.setHeaderSlot);
  return (
    <header className="header">
      {loading && <div className="header__progress" role="progressbar" aria-label={t('common.loading')} />}
      <button
        type="button"
        className="icon-button header__menu"
        aria-label={t('header.openMenu')}
        onClick={() => openPrompt('sidebar', {})}
      >
        <Icon name="menu" />
      </button>
      <Link to="/files/" className="header__brand">
        <img src={logoURL()} alt="" width="32" height="32" />
        {/* The instance's name heads every page (the screens' own titles are level two). */}
        <h1 className="header__title">{instanceName()}</h1>
      </Link>
      {/* Pages put their own actions here (see HeaderActions). */}
      <div className="header__actions" ref={setHeaderSlot} />
    </header>
  );
}
