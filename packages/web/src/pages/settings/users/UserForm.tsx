import type { User } from '@filebrowser/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { ApiError } from '../../../api/client';
import { createUser, deleteUser, updateUser } from '../../../api/users';
import { Checkbox } from '../../../components/form/Checkbox';
import { TextField } from '../../../components/form/TextField';
import { Icon } from '../../../components/Icon';
import { useUser } from '../../../hooks/use-user';
import { startup } from '../../../startup';
import { useAuthStore } from '../../../stores/auth';
import { useLayoutStore } from '../../../stores/layout';
import { showError, showSuccess } from '../../../stores/toasts';
import { RulesEditor } from '../shared/RulesEditor';
import { UserSettingsFields } from '../shared/UserSettingsFields';
import { routeAfterCreate } from './new-user';

interface UserFormProps {
  initial: User;
  isNew: boolean;
  /** Offer the automatic home folder (new users, when the server is set to create them). */
  offerHomeDir: boolean;
}

export function UserForm({ initial, isNew, offerHomeDir }: UserFormProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const me = useUser();
  const renew = useAuthStore((state) => state.renew);
  const logout = useAuthStore((state) => state.logout);
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  // The server checks the caller's own password for these changes under password login only.
  const needsCurrent = startup.AuthMethod === 'json';

  const [createHomeDir, setCreateHomeDir] = useState(offerHomeDir);
  const [scopeBeforeHomeDir, setScopeBeforeHomeDir] = useState(initial.scope);
  const [user, setUser] = useState<User>(() => (offerHomeDir ? { ...initial, scope: '' } : initial));
  const [currentPassword, setCurrentPassword] = useState('');
  const [busy, setBusy] = useState(false);

  const patch = (changes: Partial<User>) =>
    setUser((current) => {
      const next = { ...current, ...changes };
      // Admins can always change their password.
      if (next.perm.admin) next.lockPassword = false;
      return next;
    });

  const toggleHomeDir = (checked: boolean) => {
    setCreateHomeDir(checked);
    if (checked) {
      setScopeBeforeHomeDir(user.scope);
      patch({ scope: '' });
    } else {
      patch({ scope: scopeBeforeHomeDir });
    }
  };

  const submit = async () => {
    if (busy) return;
    setBusy(true);
    try {
      if (isNew) {
        const location = await createUser(user, currentPassword);
        showSuccess(t('settings.users.created'));
        void navigate(routeAfterCreate(location, startup.BaseURL), { replace: true });
        return;
      }
      await updateUser(user, ['all'], needsCurrent ? currentPassword : undefined);
      setUser((current) => ({ ...current, password: '' }));
      setCurrentPassword('');
      showSuccess(t('settings.users.updated'));
      if (user.id === me.id) await renew();
    } catch (error) {
      showError(error);
    } finally {
      setBusy(false);
    }
  };

  const askDelete = () =>
    openPrompt('confirm', {
      title: t('settings.users.deleteTitle'),
      message: t('settings.users.deleteMessage', { username: initial.username }),
      confirmLabel: t('buttons.delete'),
      askCurrentPassword: needsCurrent,
      onConfirm: async (password) => {
        try {
          await deleteUser(initial.id, password);
        } catch (error) {
          if (error instanceof ApiError && error.status === 403) throw new Error(t('errors.forbidden'));
          throw error;
        }
        showSuccess(t('settings.users.deleted'));
        if (initial.id === me.id) logout('user');
        else void navigate('/settings/users', { replace: true });
      },
    });

  return (
    <form
      className="card"
      aria-labelledby="user-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <h2 id="user-form-title" className="card__title">
        {isNew ? t('settings.users.newUser') : t('settings.users.editUser', { username: initial.username })}
      </h2>
      <div className="card__content">
        <TextField
          label={t('settings.username')}
          value={user.username}
          autoComplete="off"
          spellCheck={false}
          required
          onChange={(username) => patch({ username })}
        />
        <TextField
          label={t('settings.password')}
          type="password"
          autoComplete="new-password"
          value={user.password}
          required={isNew}
          hint={isNew ? undefined : t('settings.users.passwordHint')}
          onChange={(password) => patch({ password })}
        />
        {isNew && offerHomeDir && (
          <Checkbox
            label={t('settings.users.createHomeDir')}
            checked={createHomeDir}
            onChange={toggleHomeDir}
          />
        )}
        <UserSettingsFields value={user} onChange={patch} scopeDisabled={createHomeDir} />
        <Checkbox
          label={t('settings.users.lockPassword')}
          checked={user.lockPassword}
          disabled={user.perm.admin}
          onChange={(lockPassword) => patch({ lockPassword })}
        />
        <Checkbox
          label={t('settings.users.webdav')}
          checked={user.webdav ?? false}
          onChange={(webdav) => patch({ webdav })}
        />
        <RulesEditor rules={user.rules} onChange={(rules) => patch({ rules })} />
        {needsCurrent && (
          <TextField
            label={t('settings.currentPassword')}
            hint={t('settings.currentPasswordHint')}
            type="password"
            autoComplete="current-password"
            value={currentPassword}
            required
            onChange={setCurrentPassword}
          />
        )}
      </div>
      <div className="card__actions">
        {!isNew && (
          <button type="button" className="button button--danger" onClick={askDelete}>
            <Icon name="delete" />
            {t('buttons.delete')}
          </button>
        )}
        <button type="submit" className="button" disabled={busy}>
          {t('buttons.save')}
        </button>
      </div>
    </form>
  );
}
