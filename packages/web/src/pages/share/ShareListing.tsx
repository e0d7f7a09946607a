import type { FileItem } from '@filebrowser/contract';
import { useState, type MouseEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/Icon';
import { EmptyState } from '../../components/EmptyState';
import { formatAbsolute } from '../../utils/format-date';
import { formatSize } from '../../utils/format-size';
import { fileIcon } from '../files/file-icon';
import { SHARE_PAGE_SIZE } from './share-route';

interface ShareListingProps {
  items: FileItem[];
  selected: ReadonlySet<string>;
  /** Click selects one item; with Ctrl/Meta/Shift it adds or removes it. */
  onSelect: (item: FileItem, add: boolean) => void;
  onOpen: (item: FileItem) => void;
}

/** A read-only listing of a shared folder: the first 100 items, and a '+N' tile for 100 more. */
export function ShareListing({ items, selected, onSelect, onOpen }: ShareListingProps) {
  const { t, i18n } = useTranslation();
  const [limit, setLimit] = useState(SHARE_PAGE_SIZE);
  const [source, setSource] = useState(items);
  // Another folder starts again with its first items.
  if (source !== items) {
    setSource(items);
    setLimit(SHARE_PAGE_SIZE);
  }

  if (items.length === 0) {
    return <EmptyState />;
  }

  const shown = items.slice(0, limit);
  const hidden = items.length - shown.length;
  const click = (item: FileItem) => (event: MouseEvent) =>
    onSelect(item, event.ctrlKey || event.metaKey || event.shiftKey);

  return (
    <ul className="share-listing" aria-label={t('share.items')}>
      {shown.map((item) => {
        const modified = new Date(item.modified);
        return (
          <li key={item.path}>
            <button
              type="button"
              className="share-listing__item"
              aria-pressed={selected.has(item.path)}
              onClick={click(item)}
              onDoubleClick={() => onOpen(item)}
            >
              <Icon
                name={fileIcon(item)}
                className={item.isDir ? 'listing__icon listing__icon--dir' : 'listing__icon'}
              />
              <span className="share-listing__name">{item.name}</span>
              <span className="share-listing__meta">
                {item.isDir ? '—' : formatSize(item.size, i18n.language)}
              </span>
              <span className="share-listing__meta">
                {Number.isNaN(modified.getTime()) ? item.modified : formatAbsolute(modified, i18n.language)}
              </span>
            </button>
          </li>
        );
      })}
      {hidden > 0 && (
        <li>
          <button
            type="button"
            className="share-listing__item share-listing__more"
            title={t('share.showMore')}
            onClick={() => setLimit((n) => n + SHARE_PAGE_SIZE)}
          >
            +{hidden}
          </button>
        </li>
      )}
    </ul>
  );
}
