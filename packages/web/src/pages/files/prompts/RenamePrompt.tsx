import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { transfer } from '../../../api/resources';
import { PromptCard } from '../../../components/prompts/PromptCard';
import type { PromptProps } from '../../../components/prompts/types';
import { useFilesStore } from '../../../stores/files';
import { showError } from '../../../stores/toasts';
import { joinPath, parentPath } from '../../../utils/paths';
import { reloadListing } from '../operations';

/** Selects the name without its extension, which is what people usually change. */
function selectBaseName(input: HTMLInputElement | null, isDir: boolean): void {
  if (!input) return;
  const dot = input.value.lastIndexOf('.');
  input.setSelectionRange(0, !isDir && dot > 0 ? dot : input.value.length);
}

export function RenamePrompt({ props: { item, onRenamed }, close }: PromptProps<'rename'>) {
  const { t } = useTranslation();
  const [name, setName] = useState(item.name);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement | null>(null);
  useEffect(() => selectBaseName(input.current, item.isDir), [item.isDir]);
  const trimmed = name.trim();
  const invalid = trimmed.includes('/') || trimmed === '.' || trimmed === '..';

  const submit = async () => {
    if (busy || !trimmed || invalid) return;
    if (trimmed === item.name) {
      close();
      return;
    }
    setBusy(true);
    const destination = joinPath(parentPath(item.path), trimmed);
    try {
      await transfer('rename', item.path, destination);
      close();
      // The renamed entry stays selected under its new name.
      useFilesStore.getState().setSelection({ paths: new Set([destination]), anchor: destination });
      // Before the reload: a preview must not ask for the old path, which is gone.
      onRenamed?.(destination);
      reloadListing();
    } catch (error) {
      showError(error);
      setBusy(false);
    }
  };

  return (
    <PromptCard
      title={t('prompts.rename.title')}
      onSubmit={() => void submit()}
      actions={
        <>
          <button type="button" className="button button--flat" onClick={close}>
            {t('buttons.cancel')}
          </button>
          <button
            type="submit"
            className="button button--flat button--primary"
            disabled={busy || !trimmed || invalid}
          >
            {t('buttons.rename')}
          </button>
        </>
      }
    >
      <label className="field">
        <span className="field__label">{t('prompts.rename.message', { name: item.name })}</span>
        <input
          className={invalid ? 'input input--block input--invalid' : 'input input--block'}
          type="text"
          value={name}
          autoFocus
          ref={input}
          aria-invalid={invalid || undefined}
          onChange={(event) => setName(event.target.value)}
        />
        {invalid && <span className="field__error">{t('prompts.rename.invalid')}</span>}
      </label>
    </PromptCard>
  );
}
