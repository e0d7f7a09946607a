import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/Icon';
import { NameList } from '../../../components/prompts/NameList';
import { PromptCard } from '../../../components/prompts/PromptCard';
import type { PromptProps } from '../../../components/prompts/types';
import { useFilesStore } from '../../../stores/files';
import { showError } from '../../../stores/toasts';
import { deleteEntries, reloadListing } from '../operations';

/** How long the button shows that the deletion is done before the prompt goes. */
const DONE_DELAY_MS = 500;
export function DeletePrompt({ props: { items, onDeleted }, close }: PromptProps<'delete'>) {
  const { t } = useTranslation();
  const [phase, setPhase] = useState<'ask' | 'busy' | 'done'>('ask');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const confirm = async () => {
    if (phase !== 'ask') return;
    setPhase('busy');
    try {
      await deleteEntries(items);
      setPhase('done');
      useFilesStore.getState().clearSelection();
      // Before the reload: a preview must not ask for the file that is gone.
      onDeleted?.();
      reloadListing();
      timer.current = setTimeout(close, DONE_DELAY_MS);
    } catch (error) {
      close();
      showError(error);
      // Some entries may be gone already.
      reloadListing();
    }
  };

  const [first] = items;
  const message =
    items.length === 1 && first
      ? t('prompts.delete.messageOne', { name: first.name })
      : t('prompts.delete.messageMany', { count: items.length });

  return (
    <PromptCard
      title={t('prompts.delete.title')}
      onSubmit={() => void confirm()}
      actions={
        <>
          <button type="button" className="button button--flat" onClick={close} disabled={phase !== 'ask'}>
            {t('buttons.cancel')}
          </button>
          <button
            type="submit"
            className={`button button--danger delete-button delete-button--${phase}`}
            disabled={phase !== 'ask'}
            autoFocus
            aria-live="polite"
          >
            {phase === 'busy' && <span className="button__spinner" aria-hidden="true" />}
            {phase === 'done' && <Icon name="check" />}
            {phase === 'ask' && <Icon name="delete" />}
            {phase === 'busy'
              ? t('prompts.delete.deleting')
              : phase === 'done'
                ? t('prompts.delete.deleted')
                : t('buttons.delete')}
          </button>
        </>
      }
    >
      <p>{message}</p>
      {items.length > 1 && <NameList entries={items} />}
    </PromptCard>
  );
}
