import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation } from 'react-router';
import { ApiError, errorText } from '../../api/client';
import { usePageTitle } from '../../hooks/use-page-title';
import { instanceName, logoURL, startup } from '../../startup';
import { useAuthStore } from '../../stores/auth';
import { useRecaptcha } from './use-recaptcha';

type Mode = 'login' | 'signup';

function wantsSignup(state: unknown): boolean {
  return typeof state === 'object' && state !== null && (state as { signup?: unknown }).signup === true;
}

/**
 * Sign-in and sign-up. On success the session store gets a user, and the guard of this route
 * moves on to the page in the redirect query.
 */
export function LoginPage() {
  const { t } = useTranslation();
  const location = useLocation();
  const login = useAuthStore((state) => state.login);
  const signup = useAuthStore((state) => state.signup);
  const recaptcha = useRecaptcha();
  const errorId = useId();

  const [mode, setMode] = useState<Mode>(startup.Signup && wantsSignup(location.state) ? 'signup' : 'login');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [passwordConfirm, setPasswordConfirm] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const isSignup = mode === 'signup';

  usePageTitle(isSignup ? t('login.signupTitle') : t('login.title'));

  const describe = (failure: unknown): string => {
    if (failure instanceof ApiError) {
      if (failure.status === 403) return t('login.wrongCredentials');
      if (failure.status === 409) return t('login.usernameTaken');
      if (failure.status === 429) {
        return failure.retryAfter
          ? t('login.tooManyAttemptsWait', { seconds: failure.retryAfter })
          : t('login.tooManyAttempts');
      }
    }
    return errorText(failure);
  };

  const submit = async () => {
    if (busy) return;
    setError('');
    const captcha = recaptcha.response();
    if (recaptcha.enabled && !captcha) {
      setError(t('login.wrongCredentials'));
      return;
    }
    if (isSignup && password !== passwordConfirm) {
      setError(t('login.passwordsDontMatch'));
      return;
    }
    setBusy(true);
    try {
      if (isSignup) await signup({ username, password, recaptcha: captcha });
      else await login({ username, password, recaptcha: captcha });
    } catch (failure) {
      setError(describe(failure));
      recaptcha.reset();
      setBusy(false);
    }
  };

  const toggleMode = () => {
    setMode(isSignup ? 'login' : 'signup');
    setError('');
    setPasswordConfirm('');
  };

  return (
    <main className="login">
      <form
        className="login__card"
        aria-describedby={error ? errorId : undefined}
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <img className="login__logo" src={logoURL()} alt="" width="72" height="72" />
        <h1 className="login__title">{instanceName()}</h1>
        {error && (
          <p id={errorId} className="login__error" role="alert">
            {error}
          </p>
        )}
        <label className="sr-only" htmlFor="login-username">
          {t('login.username')}
        </label>
        <input
          id="login-username"
          className="input input--block"
          type="text"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          placeholder={t('login.username')}
          value={username}
          required
          autoFocus
          onChange={(event) => setUsername(event.target.value)}
        />
        <label className="sr-only" htmlFor="login-password">
          {t('login.password')}
        </label>
        <input
          id="login-password"
          className="input input--block"
          type="password"
          autoComplete={isSignup ? 'new-password' : 'current-password'}
          placeholder={t('login.password')}
          value={password}
          required
          onChange={(event) => setPassword(event.target.value)}
        />
        {isSignup && (
          <>
            <label className="sr-only" htmlFor="login-password-confirm">
              {t('login.passwordConfirm')}
            </label>
            <input
              id="login-password-confirm"
              className="input input--block"
              type="password"
              autoComplete="new-password"
              placeholder={t('login.passwordConfirm')}
              value={passwordConfirm}
              required
              onChange={(event) => setPasswordConfirm(event.target.value)}
            />
          </>
        )}
        {recaptcha.enabled && <div className="login__captcha" ref={recaptcha.container} />}
        <button type="submit" className="button button--block" disabled={busy}>
          {isSignup ? t('login.submitSignup') : t('login.submitLogin')}
        </button>
        {startup.Signup && (
          <button type="button" className="login__toggle" onClick={toggleMode}>
            {isSignup ? t('login.haveAccount') : t('login.noAccount')}
          </button>
        )}
      </form>
    </main>
  );
}
