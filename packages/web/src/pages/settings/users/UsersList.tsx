import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { listUsers } from '../../../api/users';
import { ErrorScreen } from '../../../components/ErrorScreen';
import { Icon } from '../../../components/Icon';
import { Spinner } from '../../../components/Spinner';
import { useLoad } from '../../../hooks/use-load';
import { usePageTitle } from '../../../hooks/use-page-title';

export function UsersList() {
  const { t } = useTranslation();
  usePageTitle(t('settings.users.title'));
  const { state } = useLoad(listUsers, 'users');

  return (
    <section className="card card--wide" aria-labelledby="users-title">
      <div className="card__header">
        <h2 id="users-title" className="card__title">
          {t('settings.users.title')}
        </h2>
        <Link to="/settings/users/new" className="button">
          <Icon name="person_add" />
          {t('buttons.new')}
        </Link>
      </div>
      {state.status === 'loading' && <Spinner />}
      {state.status === 'error' && <ErrorScreen status={state.code} detail={state.message} />}
      {state.status === 'ready' && (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('settings.username')}</th>
                <th scope="col">{t('settings.users.admin')}</th>
                <th scope="col">{t('settings.scope')}</th>
                <th scope="col">
                  <span className="sr-only">{t('settings.users.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {state.data.map((user) => (
                <tr key={user.id}>
                  <td>{user.username}</td>
                  <td>
                    {user.perm.admin ? <Icon name="done" /> : <Icon name="close" />}
                    <span className="sr-only">{user.perm.admin ? t('common.yes') : t('common.no')}</span>
                  </td>
                  <td className="table__path">{user.scope}</td>
                  <td className="table__actions">
                    <Link
                      to={`/settings/users/${user.id}`}
                      className="icon-button"
                      aria-label={t('settings.users.editLabel', { username: user.username })}
                    >
                      <Icon name="mode_edit" />
                    </Link>
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
