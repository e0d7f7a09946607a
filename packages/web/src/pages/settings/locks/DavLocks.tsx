import type { DavLockInfo } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { breakLock, listLocks } from '../../../api/locks';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorScreen } from '../../../components/ErrorScreen';
import { IconButton } from '../../../components/IconButton';
import { RelativeTime } from '../../../components/RelativeTime';
import { Spinner } from '../../../components/Spinner';
import { useLoad } from '../../../hooks/use-load';
import { usePageTitle } from '../../../hooks/use-page-title';
import { useLayoutStore } from '../../../stores/layout';
import { showSuccess } from '../../../stores/toasts';

/**
 * Settings → WebDAV locks (administrators): every lock in force, who holds it and until when,
 * and a button to break one (a client that left a lock behind, a lock in someone's way).
 */
export function DavLocks() {
  const { t, i18n } = useTranslation();
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  const { state, setData } = useLoad(listLocks, 'dav-locks');
  usePageTitle(t('settings.locks.title'));

  const askBreak = (lock: DavLockInfo) =>
    openPrompt('confirm', {
      title: t('settings.locks.breakTitle'),
      message: t('settings.locks.breakMessage', { path: lock.path, user: lock.username }),
      confirmLabel: t('settings.locks.break'),
      onConfirm: async () => {
        await breakLock(lock.token);
        setData((rows) => rows.filter((row) => row.token !== lock.token));
        showSuccess(t('settings.locks.broken'));
      },
    });

  if (state.status === 'loading') return <Spinner />;
  if (state.status === 'error') return <ErrorScreen status={state.code} detail={state.message} />;

  return (
    <section className="card card--wide" aria-labelledby="locks-title">
      <h2 id="locks-title" className="card__title">
        {t('settings.locks.title')}
      </h2>
      <p className="field__hint">{t('settings.locks.description')}</p>
      {state.data.length === 0 ? (
        <EmptyState />
      ) : (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('settings.locks.path')}</th>
                <th scope="col">{t('settings.locks.user')}</th>
                <th scope="col">{t('settings.locks.kind')}</th>
                <th scope="col">{t('settings.locks.owner')}</th>
                <th scope="col">{t('settings.locks.until')}</th>
                <th scope="col">
                  <span className="sr-only">{t('settings.locks.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {state.data.map((lock) => (
                <tr key={lock.token}>
                  <td className="table__path">{lock.path}</td>
                  <td>{lock.username}</td>
                  <td>
                    {t(`settings.locks.scopes.${lock.scope}`)},{' '}
                    {t(lock.depth === 'infinity' ? 'settings.locks.deep' : 'settings.locks.shallow')}
                  </td>
                  <td>{lock.owner}</td>
                  <td>
                    <RelativeTime date={new Date(lock.expiresAt)} locale={i18n.language} />
                  </td>
                  <td className="table__actions">
                    <IconButton
                      icon="lock_open"
                      label={t('settings.locks.breakLabel', { path: lock.path, user: lock.username })}
                      onClick={() => askBreak(lock)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
