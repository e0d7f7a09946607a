import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from './Icon';

/** A bare "404 Not Found" says nothing the headline does not. */
const STATUS_LINE = /^\d{3}( [A-Za-z' -]+)?$/;

interface ErrorScreenProps {
  /** HTTP status of the failure; 0 means the server could not be reached. */
  status: number;
  /** The server's own words, shown under the headline when they add something. */
  detail?: string;
}

export function ErrorScreen({ status, detail }: ErrorScreenProps) {
  const { t } = useTranslation();
  const titleId = useId();
  const { icon, message } =
    status === 0
      ? { icon: 'cloud_off', message: t('errors.connection') }
      : status === 403
        ? { icon: 'lock', message: t('errors.forbidden') }
        : status === 404
          ? { icon: 'gps_off', message: t('errors.notFound') }
          : { icon: 'error_outline', message: t('errors.internal') };

  return (
    <section className="error-screen" aria-labelledby={titleId}>
      <Icon name={icon} className="error-screen__icon" />
      <h2 id={titleId}>{message}</h2>
      {detail && !STATUS_LINE.test(detail) && <p className="error-screen__detail">{detail}</p>}
    </section>
  );
}
