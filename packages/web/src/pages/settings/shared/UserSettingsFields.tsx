import type { UserDefaults } from '@filebrowser/contract';
import { VIEW_MODES } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { Checkbox } from '../../../components/form/Checkbox';
import { NumberField } from '../../../components/form/NumberField';
import { SelectField } from '../../../components/form/SelectField';
import { TextField } from '../../../components/form/TextField';
import { startup } from '../../../startup';
import { formatSize } from '../../../utils/format-size';
import { isAscending, SORT_COLUMNS, sortingFor } from '../../files/listing/sorting';
import { MAX_UPLOADS_LIMIT, MIN_UPLOADS_LIMIT } from './uploads-limit';
import { LanguageSelect } from './LanguageSelect';
import { ListTextField } from './ListTextField';
import { PermissionsFields } from './PermissionsFields';

/** The settings a user record and the defaults for new users have in common. */
export type UserSettingsValue = Pick<
  UserDefaults,
  | 'scope'
  | 'locale'
  | 'viewMode'
  | 'singleClick'
  | 'hideDotfiles'
  | 'dateFormat'
  | 'redirectAfterCopyMove'
  | 'perm'
  | 'commands'
  | 'uploadsLimit'
  | 'quota'
  | 'sorting'
>;

interface UserSettingsFieldsProps {
  value: UserSettingsValue;
  onChange: (patch: Partial<UserSettingsValue>) => void;
  /** Set when the scope is derived by the server (automatic home folder). */
  scopeDisabled?: boolean;
}

export function UserSettingsFields({ value, onChange, scopeDisabled }: UserSettingsFieldsProps) {
  const { t, i18n } = useTranslation();
  const viewModes = VIEW_MODES.map((mode) => ({ value: mode, label: t(`settings.viewModes.${mode}`) }));
  const sortColumns = SORT_COLUMNS.map((column) => ({
    value: column,
    label: t(column === 'modified' ? 'files.lastModified' : `files.${column}`),
  }));
  const ascending = isAscending(value.sorting);
  // Bytes are what the server keeps; the size in words says what the number means.
  const quotaHint = (quota: number) =>
    quota > 0 ? `${formatSize(quota, i18n.language)}. ${t('settings.quotaHint')}` : t('settings.quotaHint');
  return (
    <>
      <TextField
        label={t('settings.scope')}
        value={value.scope}
        disabled={scopeDisabled}
        hint={t('settings.scopeHint')}
        spellCheck={false}
        onChange={(scope) => onChange({ scope })}
      />
      <LanguageSelect value={value.locale} onChange={(locale) => onChange({ locale })} />
      <SelectField
        label={t('settings.viewMode')}
        value={value.viewMode}
        options={viewModes}
        onChange={(viewMode) => onChange({ viewMode })}
      />
      <SelectField
        label={t('settings.sortBy')}
        value={value.sorting.by}
        options={sortColumns}
        onChange={(by) => onChange({ sorting: sortingFor(by, ascending) })}
      />
      <Checkbox
        label={t('settings.sortAscending')}
        checked={ascending}
        onChange={(checked) => onChange({ sorting: sortingFor(value.sorting.by, checked) })}
      />
      <NumberField
        label={t('settings.uploadsLimit')}
        min={MIN_UPLOADS_LIMIT}
        max={MAX_UPLOADS_LIMIT}
        value={value.uploadsLimit ?? MIN_UPLOADS_LIMIT}
        onChange={(uploadsLimit) => onChange({ uploadsLimit })}
      />
      <NumberField
        label={t('settings.quota')}
        min={0}
        value={value.quota ?? 0}
        hint={quotaHint(value.quota ?? 0)}
        onChange={(quota) => onChange({ quota })}
      />
      <Checkbox
        label={t('settings.singleClick')}
        checked={value.singleClick}
        onChange={(singleClick) => onChange({ singleClick })}
      />
      <Checkbox
        label={t('settings.hideDotfiles')}
        checked={value.hideDotfiles}
        onChange={(hideDotfiles) => onChange({ hideDotfiles })}
      />
      <Checkbox
        label={t('settings.dateFormat')}
        checked={value.dateFormat}
        onChange={(dateFormat) => onChange({ dateFormat })}
      />
      <Checkbox
        label={t('settings.redirectAfterCopyMove')}
        checked={value.redirectAfterCopyMove}
        onChange={(redirectAfterCopyMove) => onChange({ redirectAfterCopyMove })}
      />
      <PermissionsFields perm={value.perm} onChange={(perm) => onChange({ perm })} />
      {startup.EnableExec && (
        <ListTextField
          label={t('settings.commands')}
          hint={t('settings.commandsHint')}
          separator="words"
          value={value.commands}
          onChange={(commands) => onChange({ commands })}
        />
      )}
    </>
  );
}
