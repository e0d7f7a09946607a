import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/Icon';
import type { ViewMode } from './view-modes';

const ICONS: Record<ViewMode, string> = {
  source: 'code',
  table: 'table_chart',
  rendered: 'visibility',
  split: 'vertical_split',
};

// Shown in a fixed order whatever the file opens in, so the buttons never swap places.
const ORDER: ViewMode[] = ['table', 'rendered', 'split', 'source'];

/** Buttons that switch how the file is shown; the pressed one is the current mode. */
export function ViewModeSwitch({
  modes,
  mode,
  onChange,
}: {
  modes: ViewMode[];
  mode: ViewMode;
  onChange: (mode: ViewMode) => void;
}) {
  const { t } = useTranslation();
  if (modes.length < 2) return null;
  return (
    <div className="view-switch" role="group" aria-label={t('viewer.show')}>
      {ORDER.filter((option) => modes.includes(option)).map((option) => (
        <button
          key={option}
          type="button"
          className="icon-button"
          aria-pressed={option === mode}
          aria-label={t(`viewer.modes.${option}`)}
          title={t(`viewer.modes.${option}`)}
          onClick={() => onChange(option)}
        >
          <Icon name={ICONS[option]} />
        </button>
      ))}
    </div>
  );
}
