import { useTranslation } from 'react-i18next';
import { NameList } from '../../../components/prompts/NameList';
import { PromptCard } from '../../../components/prompts/PromptCard';
import type { PromptProps } from '../../../components/prompts/types';

/** Names clash at the destination: overwrite what is there, keep both (rename), or cancel. */
export function ReplaceRenamePrompt({ props: { clashes, onChoose }, close }: PromptProps<'replace-rename'>) {
  const { t } = useTranslation();
  const choose = (choice: 'overwrite' | 'rename') => {
    close();
    onChoose(choice);
  };
  return (
    <PromptCard
      title={t('prompts.replaceRename.title')}
      actions={
        <>
          <button type="button" className="button button--flat" onClick={close}>
            {t('buttons.cancel')}
          </button>
          <button
            type="button"
            className="button button--flat button--primary"
            onClick={() => choose('rename')}
            autoFocus
          >
            {t('buttons.rename')}
          </button>
          <button
            type="button"
            className="button button--flat button--danger"
            onClick={() => choose('overwrite')}
          >
            {t('buttons.overwrite')}
          </button>
        </>
      }
    >
      <p>{t('prompts.replaceRename.message', { count: clashes.length })}</p>
      <NameList entries={clashes.map((name) => ({ name }))} />
    </PromptCard>
  );
}
