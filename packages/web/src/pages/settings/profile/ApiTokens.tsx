import type { ApiToken, NewApiToken } from '@filebrowser/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { createToken, listTokens, listUserTokens, revokeToken } from '../../../api/tokens';
import { IconButton } from '../../../components/IconButton';
import { RelativeTime } from '../../../components/RelativeTime';
import { SelectField } from '../../../components/form/SelectField';
import { TextField } from '../../../components/form/TextField';
import { Spinner } from '../../../components/Spinner';
import { useLoad } from '../../../hooks/use-load';
import { startup } from '../../../startup';
import { useLayoutStore } from '../../../stores/layout';
import { showError, showSuccess } from '../../../stores/toasts';
import { copyToClipboard } from '../../../utils/clipboard';

/** The expiries offered, in days; 0 never expires. */
export const EXPIRY_DAYS = [0, 7, 30, 90, 365] as const;

/** Settings → Profile: the user's own tokens, made here and shown once. */
export function ApiTokensCard() {
  const { t } = useTranslation();
  const { state, setData } = useLoad(listTokens, 'api-tokens');
  const [fresh, setFresh] = useState<NewApiToken | null>(null);

  return (
    <section className="card card--wide" aria-labelledby="api-tokens-title">
      <h2 id="api-tokens-title" className="card__title">
        {t('settings.tokens.title')}
      </h2>
      <div className="card__content">
        <p className="field__hint">{t('settings.tokens.description')}</p>
        {fresh && <NewSecret token={fresh} onDismiss={() => setFresh(null)} />}
        <CreateTokenForm
          onCreated={(token) => {
            setFresh(token);
            setData((rows) => [...rows, withoutSecret(token)]);
          }}
        />
      </div>
      {state.status === 'loading' && <Spinner />}
      {state.status === 'error' && <p role="alert">{state.message}</p>}
      {state.status === 'ready' && (
        <TokensTable
          tokens={state.data}
          onRevoked={(id) => {
            setData((rows) => rows.filter((row) => row.id !== id));
            if (fresh?.id === id) setFresh(null);
          }}
        />
      )}
    </section>
  );
}

/** An administrator's view of one user's tokens (in the user's edit page): list and revoke. */
export function UserApiTokensCard({ userId }: { userId: number }) {
  const { t } = useTranslation();
  const { state, setData } = useLoad(() => listUserTokens(userId), `api-tokens:${userId}`);
  return (
    <section className="card card--wide" aria-labelledby="user-api-tokens-title">
      <h2 id="user-api-tokens-title" className="card__title">
        {t('settings.tokens.title')}
      </h2>
      {state.status === 'loading' && <Spinner />}
      {state.status === 'error' && <p role="alert">{state.message}</p>}
      {state.status === 'ready' && (
        <TokensTable
          tokens={state.data}
          onRevoked={(id) => setData((rows) => rows.filter((row) => row.id !== id))}
        />
      )}
    </section>
  );
}

function withoutSecret(token: NewApiToken): ApiToken {
  const { secret: _secret, ...rest } = token;
  return rest;
}

function CreateTokenForm({ onCreated }: { onCreated: (token: NewApiToken) => void }) {
  const { t } = useTranslation();
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState('30');
  const [access, setAccess] = useState<'read' | 'write'>('read');
  const [folder, setFolder] = useState('');
  const [currentPassword, setCurrentPassword] = useState('');
  const [busy, setBusy] = useState(false);
  // Only password logins check the current password (as for other sensitive changes).
  const needsCurrent = startup.AuthMethod === 'json';
  const ready = name.trim() !== '' && (!needsCurrent || currentPassword !== '');

  const submit = async () => {
    if (busy || !ready) return;
    setBusy(true);
    try {
      const token = await createToken({
        name: name.trim(),
        expiresInDays: Number(expiry),
        readOnly: access === 'read',
        ...(folder.trim() && { folder: folder.trim() }),
        ...(needsCurrent && { current_password: currentPassword }),
      });
      setName('');
      setFolder('');
      setCurrentPassword('');
      onCreated(token);
    } catch (error) {
      showError(error);
    } finally {
      setBusy(false);
    }
  };

  const expiryOptions = EXPIRY_DAYS.map((days) => ({
    value: String(days),
    label: days === 0 ? t('settings.tokens.never') : t('settings.tokens.days', { count: days }),
  }));
  return (
    <form
      aria-label={t('settings.tokens.create')}
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <TextField label={t('settings.tokens.name')} value={name} maxLength={100} onChange={setName} />
      <SelectField
        label={t('settings.tokens.expiry')}
        value={expiry}
        options={expiryOptions}
        onChange={setExpiry}
      />
      <SelectField
        label={t('settings.tokens.access')}
        value={access}
        options={[
          { value: 'read', label: t('settings.tokens.readOnly') },
          { value: 'write', label: t('settings.tokens.readWrite') },
        ]}
        onChange={(value) => setAccess(value === 'write' ? 'write' : 'read')}
      />
      <TextField
        label={t('settings.tokens.folder')}
        hint={t('settings.tokens.folderHint')}
        value={folder}
        placeholder="/"
        onChange={setFolder}
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
      <div className="card__actions">
        <button type="submit" className="button" disabled={busy || !ready}>
          {t('settings.tokens.create')}
        </button>
      </div>
    </form>
  );
}

/** The secret of a token just made: shown this once, with a copy button. */
function NewSecret({ token, onDismiss }: { token: NewApiToken; onDismiss: () => void }) {
  const { t } = useTranslation();
  const copy = async () => {
    try {
      await copyToClipboard(token.secret);
      showSuccess(t('settings.tokens.copied'));
    } catch (error) {
      showError(error);
    }
  };
  return (
    <div className="field" role="status" aria-labelledby="api-token-secret-label">
      <p id="api-token-secret-label" className="field__label">
        {t('settings.tokens.secretTitle', { name: token.name })}
      </p>
      <p className="field__hint">
        <strong>{t('settings.tokens.secretWarning')}</strong>
      </p>
      <input
        className="input input--block"
        readOnly
        value={token.secret}
        aria-labelledby="api-token-secret-label"
        onFocus={(event) => event.target.select()}
      />
      <div className="card__actions">
        <button type="button" className="button button--flat" onClick={onDismiss}>
          {t('buttons.dismiss')}
        </button>
        <button type="button" className="button" onClick={() => void copy()}>
          {t('settings.tokens.copy')}
        </button>
      </div>
    </div>
  );
}

function TokensTable({ tokens, onRevoked }: { tokens: ApiToken[]; onRevoked: (id: string) => void }) {
  const { t, i18n } = useTranslation();
  const openPrompt = useLayoutStore((state) => state.openPrompt);

  const askRevoke = (token: ApiToken) =>
    openPrompt('confirm', {
      title: t('settings.tokens.revokeTitle'),
      message: t('settings.tokens.revokeMessage', { name: token.name }),
      confirmLabel: t('settings.tokens.revoke'),
      onConfirm: async () => {
        await revokeToken(token.id);
        onRevoked(token.id);
        showSuccess(t('settings.tokens.revoked'));
      },
    });

  const when = (seconds: number) => <RelativeTime date={new Date(seconds * 1000)} locale={i18n.language} />;

  if (tokens.length === 0) return <p className="card__content">{t('settings.tokens.none')}</p>;
  const now = Date.now() / 1000;
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">{t('settings.tokens.name')}</th>
            <th scope="col">{t('settings.tokens.created')}</th>
            <th scope="col">{t('settings.tokens.lastUsed')}</th>
            <th scope="col">{t('settings.tokens.expiry')}</th>
            <th scope="col">{t('settings.tokens.access')}</th>
            <th scope="col">
              <span className="sr-only">{t('settings.shares.actions')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((token) => (
            <tr key={token.id}>
              <td className="table__path">{token.name}</td>
              <td>{when(token.created)}</td>
              <td>{token.lastUsed === 0 ? t('settings.tokens.never') : when(token.lastUsed)}</td>
              <td>
                {token.expires === 0
                  ? t('settings.tokens.never')
                  : token.expires <= now
                    ? t('settings.tokens.expired')
                    : when(token.expires)}
              </td>
              <td className="table__path">
                {token.readOnly ? t('settings.tokens.readOnly') : t('settings.tokens.readWrite')}
                {token.folder && (
                  <>
                    {' · '}
                    {token.folderMissing
                      ? t('settings.tokens.folderMissing', { folder: token.folder })
                      : token.folder}
                  </>
                )}
              </td>
              <td className="table__actions">
                <IconButton
                  icon="delete"
                  label={t('settings.tokens.revokeLabel', { name: token.name })}
                  onClick={() => askRevoke(token)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
