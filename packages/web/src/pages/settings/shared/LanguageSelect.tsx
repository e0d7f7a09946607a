import { useTranslation } from 'react-i18next';
import { SelectField } from '../../../components/form/SelectField';
import { LOCALES, resolveLocale } from '../../../i18n/locales';

const OPTIONS = LOCALES.map((locale) => ({ value: locale.code, label: locale.name }));

export function LanguageSelect({ value, onChange }: { value: string; onChange: (locale: string) => void }) {
  const { t } = useTranslation();
  return (
    <SelectField
      label={t('settings.language')}
      value={resolveLocale(value)}
      options={OPTIONS}
      onChange={onChange}
    />
  );
}
