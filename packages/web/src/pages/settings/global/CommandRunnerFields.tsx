import type { Settings } from '@filebrowser/contract';
import { HOOK_TRIGGERS } from '@filebrowser/contract';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/Icon';
import { ListTextField } from '../shared/ListTextField';

type CommandRunnerSettings = Pick<Settings, 'commands' | 'unsafeCommands'>;

/**
 * The command runner's global settings: the event hooks (one command per line for each trigger)
 * and the commands exempted from the runner's deny list, under a warning of what that means.
 */
export function CommandRunnerFields({
  value,
  onChange,
}: {
  value: CommandRunnerSettings;
  onChange: (patch: Partial<CommandRunnerSettings>) => void;
}) {
  const { t } = useTranslation();
  const warningId = useId();
  const { commands } = value;
  return (
    <>
      <p className="field__hint">{t('settings.commandRunner.hooksDescription')}</p>
      {HOOK_TRIGGERS.map((trigger) => (
        <ListTextField
          key={trigger}
          label={t(`settings.commandRunner.triggers.${trigger}`)}
          separator="lines"
          value={commands[trigger] ?? []}
          onChange={(list) => onChange({ commands: { ...commands, [trigger]: list } })}
        />
      ))}
      <fieldset className="fieldset fieldset--danger" aria-describedby={warningId}>
        <legend>{t('settings.commandRunner.unsafeCommands')}</legend>
        <p id={warningId} className="callout callout--danger" role="note">
          <Icon name="warning" />
          <span>{t('settings.commandRunner.unsafeWarning')}</span>
        </p>
        <ListTextField
          label={t('settings.commandRunner.unsafeCommands')}
          hint={t('settings.commandRunner.unsafeCommandsHint')}
          separator="lines"
          value={value.unsafeCommands ?? []}
          onChange={(unsafeCommands) => onChange({ unsafeCommands })}
        />
      </fieldset>
    </>
  );
}
