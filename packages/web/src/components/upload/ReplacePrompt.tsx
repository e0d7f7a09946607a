import { useTranslation } from 'react-i18next';
import { NameList } from '../prompts/NameList';
import { PromptCard } from '../prompts/PromptCard';
import type { PromptProps } from '../prompts/types';

/** Upload name clashes: replace what is there, or keep both; closing uploads nothing. */
export function ReplacePrompt({ props, close }: PromptProps<'replace'>) {
  const { t } = useTranslation();
  const choose = (action: () => void) => {
    close();
    action();
  };
  return (
    <PromptCard
      title={t('upload.replaceTitle')}
      actions={
        <>
          <button type="button" className="button button--flat" onClick={close}>
            {t('buttons.cancel')}
          </button>
          <button
            type="button"
            className="button button--flat button--primary"
            onClick={() => choose(props.onKeep)}
          >
            {t('upload.keepBoth')}
          </button>
          <button type="button" className="button" onClick={() => choose(props.onReplace)} autoFocus>
            {t('upload.replace')}
          </button>
        </>
      }
    >
      <p>{t('upload.replaceMessage')}</p>
      <NameList entries={props.names.map((name) => ({ name }))} />
    </PromptCard>
  );
}
