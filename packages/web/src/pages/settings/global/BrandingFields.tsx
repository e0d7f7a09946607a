import type { Branding } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { Checkbox } from '../../../components/form/Checkbox';
import { SelectField } from '../../../components/form/SelectField';
import { TextField } from '../../../components/form/TextField';

export function BrandingFields({
  branding,
  colorInvalid = false,
  onChange,
}: {
  branding: Branding;
  /** The colour is neither empty, a hex colour nor a colour name. */
  colorInvalid?: boolean;
  onChange: (patch: Partial<Branding>) => void;
}) {
  const { t } = useTranslation();
  const themes = [
    { value: '', label: t('settings.themes.default') },
    { value: 'light', label: t('settings.themes.light') },
    { value: 'dark', label: t('settings.themes.dark') },
  ];
  return (
    <fieldset className="fieldset">
      <legend>{t('settings.branding.title')}</legend>
      <p className="field__hint">{t('settings.branding.description')}</p>
      <TextField
        label={t('settings.branding.name')}
        value={branding.name}
        onChange={(name) => onChange({ name })}
      />
      <Checkbox
        label={t('settings.branding.disableExternal')}
        checked={branding.disableExternal}
        onChange={(disableExternal) => onChange({ disableExternal })}
      />
      <Checkbox
        label={t('settings.branding.disableUsedPercentage')}
        checked={branding.disableUsedPercentage}
        onChange={(disableUsedPercentage) => onChange({ disableUsedPercentage })}
      />
      <SelectField
        label={t('settings.branding.theme')}
        value={branding.theme}
        options={themes}
        onChange={(theme) => onChange({ theme })}
      />
      <TextField
        label={t('settings.branding.color')}
        hint={colorInvalid ? t('settings.branding.colorInvalid') : t('settings.branding.colorHint')}
        value={branding.color}
        spellCheck={false}
        aria-invalid={colorInvalid}
        inputClassName={colorInvalid ? 'input--invalid' : undefined}
        onChange={(color) => onChange({ color: color.trim() })}
      />
      <TextField
        label={t('settings.branding.files')}
        hint={t('settings.branding.filesHint')}
        value={branding.files}
        spellCheck={false}
        onChange={(files) => onChange({ files })}
      />
    </fieldset>
  );
}
