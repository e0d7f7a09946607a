import type { Settings } from '@filebrowser/contract';
import { HOOK_TRIGGERS } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { ListTextField } from '../shared/ListTextField';

type Commands = Settings['commands'];

/** Commands run before and after each file event, one command per line. */
export function CommandRunnerFields({
  commands,
  onChange,
}: {
  commands: Commands;
  onChange: (commands: Commands) => void;
}) {
  const { t } = useTranslation();
  return (
    <>
      <p className="field__hint">{t('settings.commandRunner.description')}</p>
      {HOOK_TRIGGERS.map((trigger) => (
        <ListTextField
          key={trigger}
          label={t(`settings.commandRunner.triggers.${trigger}`)}
          separator="lines"
          value={commands[trigger] ?? []}
          onChange={(list) => onChange({ ...commands, [trigger]: list })}
        />
      ))}
    </>
  );
}
