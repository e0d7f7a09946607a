import type { Sorting } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/Icon';
import { changeSorting } from '../operations';
import { isAscending, SORT_COLUMNS, type SortField } from './sorting';

const LABEL_KEYS = { name: 'files.name', size: 'files.size', modified: 'files.lastModified' } as const;

/** The column headers: a click sorts by that column, a second click reverses it. */
export function SortHeader({ sorting }: { sorting: Sorting }) {
  const { t } = useTranslation();
  const ascending = isAscending(sorting);
  return (
    <div role="row" className="listing__header">
      {SORT_COLUMNS.map((column: SortField) => {
        const active = sorting.by === column;
        return (
          <div
            key={column}
            role="columnheader"
            className={`listing__column listing__column--${column}`}
            aria-sort={active ? (ascending ? 'ascending' : 'descending') : 'none'}
          >
            <button
              type="button"
              className={active ? 'sort-button sort-button--active' : 'sort-button'}
              onClick={() => void changeSorting(sorting, column)}
            >
              <span>{t(LABEL_KEYS[column])}</span>
              <Icon
                name={active && !ascending ? 'arrow_downward' : 'arrow_upward'}
                className="sort-button__arrow"
              />
            </button>
          </div>
        );
      })}
    </div>
  );
}
