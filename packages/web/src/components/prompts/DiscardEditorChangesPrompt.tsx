import { useTranslation } from 'react-i18next';
import { PromptCard } from './PromptCard';
import type { PromptProps } from './types';

/** Unsaved changes in the editor: stay, or leave without saving. */
export function DiscardEditorChangesPrompt({ props, close }: PromptProps<'discardEditorChanges'>) {
  const { t } = useTranslation();
  return (
    <PromptCard
      title={t('editor.discardTitle')}
      actions={
        <>
          <button type="button" className="button button--flat" onClick={close} autoFocus>
            {t('buttons.cancel')}
          </button>
          <button
            type="button"
            className="button button--flat button--danger"
            onClick={() => {
              // Before closing: closing alone means "stay".
              props.onDiscard();
              close();
            }}
          >
            {t('editor.discard')}
          </button>
        </>
      }
    >
      <p>{t('editor.discardMessage')}</p>
    </PromptCard>
  );
}
