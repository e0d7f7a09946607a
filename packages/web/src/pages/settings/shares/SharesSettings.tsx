import type { Share } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { deleteShare, listShares, shareLink } from '../../../api/shares';
import { listUsers } from '../../../api/users';
import { ErrorScreen } from '../../../components/ErrorScreen';
import { IconButton } from '../../../components/IconButton';
import { RelativeTime } from '../../../components/RelativeTime';
import { EmptyState } from '../../../components/EmptyState';
import { Spinner } from '../../../components/Spinner';
import { useCopyLink } from '../../../hooks/use-copy-link';
import { useLoad } from '../../../hooks/use-load';
import { usePageTitle } from '../../../hooks/use-page-title';
import { useUser } from '../../../hooks/use-user';
import { useLayoutStore } from '../../../stores/layout';
import { showSuccess } from '../../../stores/toasts';
import { filesRoute } from '../../../utils/paths';

type ShareRow = Share & { username?: string };

/** Admins see every share; the API only gives owner ids, so names come from the user list. */
async function loadShares(withUsernames: boolean): Promise<ShareRow[]> {
  const shares = await listShares();
  if (!withUsernames) return shares;
  const users = await listUsers();
  const names = new Map(users.map((user) => [user.id, user.username]));
  return shares.map((share) => ({ ...share, username: names.get(share.userID) ?? String(share.userID) }));
}

export function SharesSettings() {
  const { t, i18n } = useTranslation();
  const user = useUser();
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  const copyLink = useCopyLink();
  const isAdmin = user.perm.admin;
  const { state, setData } = useLoad(() => loadShares(isAdmin), `shares:${isAdmin}`);
  usePageTitle(t('settings.shares.title'));

  const askDelete = (share: ShareRow) =>
    openPrompt('confirm', {
      title: t('settings.shares.deleteTitle'),
      message: t('settings.shares.deleteMessage', { path: share.path }),
      confirmLabel: t('buttons.delete'),
      onConfirm: async () => {
        await deleteShare(share.hash);
        setData((rows) => rows.filter((row) => row.hash !== share.hash));
        showSuccess(t('settings.shares.deleted'));
      },
    });

  const copy = (share: ShareRow) => copyLink(shareLink(share.hash));

  if (state.status === 'loading') return <Spinner />;
  if (state.status === 'error') return <ErrorScreen status={state.code} detail={state.message} />;

  return (
    <section className="card card--wide" aria-labelledby="shares-title">
      <h2 id="shares-title" className="card__title">
        {t('settings.shares.title')}
      </h2>
      {state.data.length === 0 ? (
        <EmptyState />
      ) : (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('settings.shares.path')}</th>
                <th scope="col">{t('settings.shares.expiry')}</th>
                {isAdmin && <th scope="col">{t('settings.shares.username')}</th>}
                <th scope="col">
                  <span className="sr-only">{t('settings.shares.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {state.data.map((share) => {
                const expires = new Date(share.expire * 1000);
                return (
                  <tr key={share.hash}>
                    <td className="table__path">
                      <Link to={filesRoute(share.path, share.path.endsWith('/'))}>{share.path}</Link>
                    </td>
                    <td>
                      {share.expire === 0 ? (
                        t('settings.shares.permanent')
                      ) : (
                        <RelativeTime date={expires} locale={i18n.language} />
                      )}
                    </td>
                    {isAdmin && <td>{share.username}</td>}
                    <td className="table__actions">
                      <IconButton
                        icon="delete"
                        label={t('settings.shares.deleteLabel', { path: share.path })}
                        onClick={() => askDelete(share)}
                      />
                      <IconButton
                        icon="content_paste"
                        label={t('settings.shares.copyLabel', { path: share.path })}
                        onClick={() => void copy(share)}
                      />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
