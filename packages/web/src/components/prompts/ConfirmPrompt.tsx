import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { PromptProps } from './types';
import { PromptCard } from './PromptCard';
import { showError } from '../../stores/toasts';

/** A question with a confirm button; optionally asks for the caller's password, as sensitive calls need it. */
export function ConfirmPrompt({ props, close }: PromptProps<'confirm'>) {
  const { t } = useTranslation();
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);

  const confirm = async () => {
    if (busy || (props.askCurrentPassword && !password)) return;
    setBusy(true);
    try {
      await props.onConfirm(password);
      close();
    } catch (error) {
      showError(error);
      setBusy(false);
    }
  };

  return (
    <PromptCard
      title={props.title}
      onSubmit={() => void confirm()}
      actions={
        <>
          <button
            type="button"
            className="button button--flat"
            onClick={close}
            autoFocus={!props.askCurrentPassword}
          >
            {t('buttons.cancel')}
          </button>
          <button
            type="submit"
            className="button button--flat button--danger"
            disabled={busy || (props.askCurrentPassword && !password)}
          >
            {props.confirmLabel}
          </button>
        </>
      }
    >
      <p>{props.message}</p>
      {props.askCurrentPassword && (
        <label className="field">
          <span className="field__label">{t('prompts.currentPassword')}</span>
          <input
            className="input"
            type="password"
            autoComplete="current-password"
            value={password}
            autoFocus
            required
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
      )}
    </PromptCard>
  );
}
