import { useTranslation } from 'react-i18next';
import { ErrorScreen } from '../../components/ErrorScreen';
import { usePageTitle } from '../../hooks/use-page-title';

export function ErrorPage({ status }: { status: 403 | 404 | 500 }) {
  const { t } = useTranslation();
  const titles = {
    403: t('pageTitles.forbidden'),
    404: t('pageTitles.notFound'),
    500: t('pageTitles.internalError'),
  } as const;
  usePageTitle(titles[status]);
  return <ErrorScreen status={status} />;
}
