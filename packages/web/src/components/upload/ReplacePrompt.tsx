import { useTranslation } from 'react-i18next';
import { PromptCard } from '../prompts/PromptCard';
import type { PromptProps } from '../prompts/types';

/** How many clashing names are listed before "and N more". */
const SHOWN_NAMES = 5;

/** Upload name clashes: replace what is there, or keep both; closing uploads nothing. */
export function ReplacePrompt({ props, close }: PromptProps<'replace'>) {
  const { t } = useTranslation();
  const shown = props.names.slice(0, SHOWN_NAMES);
  const more = props.names.length - shown.length;
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
      <ul className="upload-clashes">
        {shown.map((name) => (
          <li key={name}>{name}</li>
        ))}
        {more > 0 && <li className="upload-clashes__more">{t('upload.moreClashes', { count: more })}</li>}
      </ul>
    </PromptCard>
  );
}
