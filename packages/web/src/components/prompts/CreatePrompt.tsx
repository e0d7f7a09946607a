import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { createFile, createFolder } from '../../api/resources';
import { useFilesStore } from '../../stores/files';
import { showError } from '../../stores/toasts';
import { filesRoute, joinPath } from '../../utils/paths';
import { PromptCard } from './PromptCard';

interface CreatePromptProps {
  kind: 'folder' | 'file';
  /** The folder the new entry goes into. */
  base: string;
  close: () => void;
}

/** The newDir and newFile prompts: ask for a name, create the entry, then open it. */
export function CreatePrompt({ kind, base, close }: CreatePromptProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const invalidateListing = useFilesStore((state) => state.invalidateListing);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const isFolder = kind === 'folder';

  const submit = async () => {
    const trimmed = name.trim();
    if (!trimmed || busy) return;
    setBusy(true);
    const path = joinPath(base, trimmed);
    try {
      if (isFolder) await createFolder(path);
      else await createFile(path);
      close();
      invalidateListing();
      navigate(filesRoute(path, isFolder));
    } catch (error) {
      showError(error);
      setBusy(false);
    }
  };

  return (
    <PromptCard
      title={isFolder ? t('prompts.newDir.title') : t('prompts.newFile.title')}
      onSubmit={() => void submit()}
      actions={
        <>
          <button type="button" className="button button--flat" onClick={close}>
            {t('buttons.cancel')}
          </button>
          <button type="submit" className="button button--flat button--primary" disabled={busy}>
            {t('buttons.create')}
          </button>
        </>
      }
    >
      <label className="field">
        <span className="field__label">
          {isFolder ? t('prompts.newDir.message') : t('prompts.newFile.message')}
        </span>
        <input
          className="input"
          type="text"
          value={name}
          autoFocus
          onChange={(event) => setName(event.target.value)}
        />
      </label>
    </PromptCard>
  );
}
