import { useTranslation } from 'react-i18next';
import { Icon } from './Icon';

/** What a page shows where a list has nothing in it: an icon and one line, by default "It feels lonely here...". */
export function EmptyState({ icon = 'sentiment_dissatisfied', text }: { icon?: string; text?: string }) {
  const { t } = useTranslation();
  return (
    <div className="lonely">
      <Icon name={icon} className="lonely__icon" />
      <p>{text ?? t('files.lonely')}</p>
    </div>
  );
}
