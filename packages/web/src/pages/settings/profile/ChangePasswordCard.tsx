import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { updateUser } from '../../../api/users';
import { TextField } from '../../../components/form/TextField';
import { useUser } from '../../../hooks/use-user';
import { startup } from '../../../startup';
import { showError, showSuccess } from '../../../stores/toasts';

/** "input--valid" when both are typed and equal, "input--invalid" when they differ, else nothing. */
export function matchClass(password: string, confirmation: string): string | undefined {
  if (!password || !confirmation) return undefined;
  return password === confirmation ? 'input--valid' : 'input--invalid';
}

export function ChangePasswordCard() {
  const { t } = useTranslation();
  const user = useUser();
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [currentPassword, setCurrentPassword] = useState('');
  const [busy, setBusy] = useState(false);
  // Only password logins check the current password; proxy and hook users are password-locked.
  const needsCurrent = startup.AuthMethod === 'json';

  if (user.lockPassword) return null;

  const submit = async () => {
    if (busy || !password || password !== confirmation) return;
    setBusy(true);
    try {
      await updateUser({ id: user.id, password }, ['password'], needsCurrent ? currentPassword : undefined);
      setPassword('');
      setConfirmation('');
      setCurrentPassword('');
      showSuccess(t('settings.profile.passwordUpdated'));
    } catch (error) {
      showError(error);
    } finally {
      setBusy(false);
    }
  };

  const validity = matchClass(password, confirmation);
  return (
    <form
      className="card"
      aria-labelledby="change-password-title"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <h2 id="change-password-title" className="card__title">
        {t('settings.profile.changePassword')}
      </h2>
      <div className="card__content">
        <TextField
          label={t('settings.profile.newPassword')}
          type="password"
          autoComplete="new-password"
          value={password}
          inputClassName={validity}
          onChange={setPassword}
        />
        <TextField
          label={t('settings.profile.newPasswordConfirm')}
          type="password"
          autoComplete="new-password"
          value={confirmation}
          inputClassName={validity}
          aria-invalid={validity === 'input--invalid'}
          onChange={setConfirmation}
        />
        {needsCurrent && (
          <TextField
            label={t('settings.currentPassword')}
            type="password"
            autoComplete="current-password"
            value={currentPassword}
            required
            onChange={setCurrentPassword}
          />
        )}
      </div>
      <div className="card__actions">
        <button type="submit" className="button" disabled={busy || !password || password !== confirmation}>
          {t('buttons.update')}
        </button>
      </div>
    </form>
  );
}
