import { useTranslation } from 'react-i18next';
import { Icon } from '../Icon';

/** Names listed before "and N more". */
const LISTED_NAMES = 5;

export interface ListedName {
  name: string;
  /** Shows a folder or file icon before the name; no icon when left out. */
  isDir?: boolean;
}

/** The entries a prompt is about (to delete, clashing), the first few by name. */
export function NameList({ entries }: { entries: readonly ListedName[] }) {
  const { t } = useTranslation();
  return (
    <ul className="prompt__names">
      {entries.slice(0, LISTED_NAMES).map((entry) => (
        <li key={entry.name}>
          {entry.isDir !== undefined && <Icon name={entry.isDir ? 'folder' : 'insert_drive_file'} />}
          <span>{entry.name}</span>
        </li>
      ))}
      {entries.length > LISTED_NAMES && (
        <li className="prompt__more">{t('prompts.andMore', { count: entries.length - LISTED_NAMES })}</li>
      )}
    </ul>
  );
}
