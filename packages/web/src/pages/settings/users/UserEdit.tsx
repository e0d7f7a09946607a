import type { User } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { ApiError } from '../../../api/client';
import { getSettings } from '../../../api/settings';
import { getUser } from '../../../api/users';
import { ErrorScreen } from '../../../components/ErrorScreen';
import { Spinner } from '../../../components/Spinner';
import { useLoad } from '../../../hooks/use-load';
import { usePageTitle } from '../../../hooks/use-page-title';
import { UserApiTokensCard } from '../profile/ApiTokens';
import { newUserFrom } from './new-user';
import { UserForm } from './UserForm';

interface FormData {
  user: User;
  offerHomeDir: boolean;
}

async function loadFormData(id: string | undefined): Promise<FormData> {
  if (id === undefined) {
    const settings = await getSettings();
    return { user: newUserFrom(settings.defaults), offerHomeDir: settings.createUserDir };
  }
  if (!/^\d+$/.test(id)) throw new ApiError(404, '404 Not Found');
  return { user: await getUser(Number(id)), offerHomeDir: false };
}

/** /settings/users/new and /settings/users/:id */
export function UserEdit() {
  const { t } = useTranslation();
  const { id } = useParams();
  const { state } = useLoad(() => loadFormData(id), `user:${id ?? 'new'}`);
  const username = state.status === 'ready' ? state.data.user.username : '';
  usePageTitle(id === undefined ? t('settings.users.newUser') : username || t('settings.users.title'));

  if (state.status === 'loading') return <Spinner />;
  if (state.status === 'error') return <ErrorScreen status={state.code} detail={state.message} />;
  const form = (
    <UserForm
      key={id ?? 'new'}
      initial={state.data.user}
      isNew={id === undefined}
      offerHomeDir={state.data.offerHomeDir}
    />
  );
  if (id === undefined) return form;
  return (
    <div className="settings__cards">
      {form}
      <UserApiTokensCard userId={state.data.user.id} />
    </div>
  );
}
