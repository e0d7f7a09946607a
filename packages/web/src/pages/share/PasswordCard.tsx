import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/Icon';

interface PasswordCardProps {
  /** A password was sent and refused. */
  wrong: boolean;
  /** The server refuses more guesses for now. */
  tooMany: boolean;
  retryAfter?: number;
  onSubmit: (password: string) => void;
}

/** Asks a visitor for the password of a protected link. */
export function PasswordCard({ wrong, tooMany, retryAfter, onSubmit }: PasswordCardProps) {
  const { t } = useTranslation();
  const [password, setPassword] = useState('');
  const notice = tooMany
    ? retryAfter
      ? t('login.tooManyAttemptsWait', { seconds: retryAfter })
      : t('login.tooManyAttempts')
    : wrong
      ? t('login.wrongCredentials')
      : null;
  return (
    <form
      className="card share-password"
      aria-labelledby="share-password-title"
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit(password);
      }}
    >
      <h2 id="share-password-title" className="card__title">
        <Icon name="lock" /> {t('share.passwordTitle')}
      </h2>
      <div className="card__content">
        {notice && (
          <p className="login__error" role="alert">
            {notice}
          </p>
        )}
        <label className="field">
          <span className="field__label">{t('login.password')}</span>
          <input
            className="input input--block"
            type="password"
            autoComplete="off"
            autoFocus
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
      </div>
      <div className="card__actions">
        <button type="submit" className="button">
          {t('buttons.submit')}
        </button>
      </div>
    </form>
  );
}
