import { useTranslation } from 'react-i18next';
import type { PromptProps } from './types';
import { PromptCard } from './PromptCard';

export function HelpPrompt({ close }: PromptProps<'help'>) {
  const { t } = useTranslation();
  const shortcuts = [
    ['F1', t('help.f1')],
    ['F2', t('help.f2')],
    ['Del', t('help.del')],
    ['Esc', t('help.esc')],
    ['Ctrl + F', t('help.ctrlF')],
    ['Ctrl + C', t('help.ctrlC')],
    ['Ctrl + X', t('help.ctrlX')],
    ['Ctrl + V', t('help.ctrlV')],
    ['Ctrl + A', t('help.ctrlA')],
    ['Ctrl + S', t('help.ctrlS')],
    ['I', t('help.i')],
    ['F', t('help.f')],
    [t('help.arrowsKey'), t('help.arrows')],
    ['Enter', t('help.enter')],
    ['Ctrl + Click', t('help.ctrlClick')],
    [t('help.clickKey'), t('help.click')],
    [t('help.doubleClickKey'), t('help.doubleClick')],
  ] as const;

  return (
    <PromptCard
      title={t('help.title')}
      actions={
        <button type="button" className="button button--flat" onClick={close} autoFocus>
          {t('buttons.ok')}
        </button>
      }
    >
      <dl className="shortcuts">
        {shortcuts.map(([key, description]) => (
          <div key={key} className="shortcuts__row">
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{description}</dd>
          </div>
        ))}
      </dl>
    </PromptCard>
  );
}
