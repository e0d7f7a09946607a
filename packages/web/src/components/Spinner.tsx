import { useTranslation } from 'react-i18next';

export function Spinner() {
  const { t } = useTranslation();
  return (
    <div className="spinner-wrap" role="status">
      <div className="spinner" />
      <span className="sr-only">{t('common.loading')}</span>
    </div>
  );
}
