import type { FileItem } from '@filebrowser/contract';
import { memo, useState, type DragEvent, type KeyboardEvent, type MouseEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Icon } from '../../../components/Icon';
import { useFilesStore } from '../../../stores/files';
import { formatAbsolute, formatModified } from '../../../utils/format-date';
import { formatSize } from '../../../utils/format-size';
import { filesRoute } from '../../../utils/paths';
import { fileKind, isDotfile, KIND_ICONS } from '../file-icon';
import type { ViewMode } from './listing-layout';
import { Thumbnail } from './Thumbnail';

/** What the listing does when an entry is clicked, dragged or dropped on; one object for all entries. */
export interface ItemInteractions {
  click: (event: MouseEvent, index: number) => void;
  keyDown: (event: KeyboardEvent, index: number) => void;
  /** The entry's name got the focus (the listing remembers it as its one Tab stop). */
  focus?: (index: number) => void;
  dragStart: (event: DragEvent, index: number) => void;
  /** Whether dragged entries may drop on this entry (a folder that is not one of them). */
  canDrop: (event: DragEvent, item: FileItem) => boolean;
  drop: (event: DragEvent, item: FileItem) => void;
}

interface ListingItemProps {
  item: FileItem;
  index: number;
  /** The row's position for assistive technology (list view; the list is virtualised). */
  rowIndex?: number;
  mode: ViewMode;
  /** Whether entries may be dragged (rename permission). */
  draggable: boolean;
  /** Whether the entry was cut to the clipboard (it is shown faded until pasted). */
  cut: boolean;
  dateFormat: boolean;
  thumbnails: boolean;
  interactions: ItemInteractions;
  /**
   * Whether Tab stops on this entry. The listing is one Tab stop (the entry last focused) and
   * the arrow keys move inside it, so Tab goes on to what follows instead of through every entry.
   */
  tabbable?: boolean;
}

/**
 * The entry's icon or thumbnail. In the list a selected entry shows a check mark instead, and in
 * "select multiple" mode an empty circle says that a tap selects.
 */
function ItemIcon({
  item,
  checked,
  checkable = false,
  thumbnails,
}: {
  item: FileItem;
  checked: boolean;
  checkable?: boolean;
  thumbnails: boolean;
}) {
  if (checked) return <Icon name="check_circle" className="item__icon item__icon--checked" />;
  if (checkable) return <Icon name="radio_button_unchecked" className="item__icon" />;
  if (thumbnails && item.type === 'image') return <Thumbnail item={item} />;
  const kind = fileKind(item);
  return <Icon name={KIND_ICONS[kind]} className={`item__icon item__icon--${kind}`} />;
}

/** One entry of the listing: a row of the list, or a tile of the mosaic and gallery views. */
export const ListingItem = memo(function ListingItem({
  item,
  index,
  rowIndex,
  mode,
  draggable,
  cut,
  dateFormat,
  thumbnails,
  interactions,
  tabbable = true,
}: ListingItemProps) {
  const { i18n } = useTranslation();
  const selected = useFilesStore((state) => state.selection.paths.has(item.path));
  const multiple = useFilesStore((state) => state.multiple);
  const [dropping, setDropping] = useState(false);
  const modified = new Date(item.modified);
  const size = item.isDir ? '—' : formatSize(item.size, i18n.language);
  const when = formatModified(item.modified, dateFormat, i18n.language);
  const exact = Number.isNaN(modified.getTime()) ? undefined : formatAbsolute(modified, i18n.language);
  const isList = mode === 'list';

  const classes = [
    'item',
    isList ? 'item--row' : mode === 'mosaic' ? 'item--tile' : 'item--gallery',
    selected && 'item--selected',
    cut && 'item--cut',
    isDotfile(item.name) && 'item--dotfile',
    dropping && 'item--drop',
  ]
    .filter(Boolean)
    .join(' ');

  const link = (
    <Link
      to={filesRoute(item.path, item.isDir)}
      className="item__name"
      draggable={false}
      // The listing decides what a click does (select or open); the link is there for keyboard,
      // middle-click and "open in new tab".
      onClick={(event) => event.preventDefault()}
      onKeyDown={(event) => interactions.keyDown(event, index)}
      onFocus={() => interactions.focus?.(index)}
      tabIndex={tabbable ? undefined : -1}
      title={item.name}
    >
      {item.name}
    </Link>
  );

  return (
    <div
      role={isList ? 'row' : 'gridcell'}
      aria-selected={selected}
      aria-rowindex={isList ? rowIndex : undefined}
      className={classes}
      data-name={item.name}
      data-index={index}
      data-dir={item.isDir || undefined}
      // Files dropped from the desktop onto a folder upload into it (see use-upload-drop).
      data-upload-folder={item.isDir ? item.path : undefined}
      draggable={draggable}
      onClick={(event) => interactions.click(event, index)}
      onDragStart={(event) => interactions.dragStart(event, index)}
      onDragOver={(event) => {
        if (!interactions.canDrop(event, item)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'move';
        if (!dropping) setDropping(true);
      }}
      onDragLeave={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDropping(false);
      }}
      onDrop={(event) => {
        setDropping(false);
        if (!interactions.canDrop(event, item)) return;
        event.preventDefault();
        interactions.drop(event, item);
      }}
    >
      {isList ? (
        <>
          <div role="gridcell" className="item__main">
            <ItemIcon item={item} checked={selected} checkable={multiple} thumbnails={false} />
            <div className="item__text">
              {link}
              <span className="item__meta">{item.isDir ? when : `${size} · ${when}`}</span>
            </div>
          </div>
          <div role="gridcell" className="item__size">
            {size}
          </div>
          <div role="gridcell" className="item__modified">
            <time dateTime={item.modified} title={exact}>
              {when}
            </time>
          </div>
        </>
      ) : (
        <>
          <div className="item__visual">
            <ItemIcon item={item} checked={false} thumbnails={thumbnails} />
          </div>
          <div className="item__text">
            {link}
            <span className="item__meta">
              {item.isDir ? (
                <time dateTime={item.modified} title={exact}>
                  {when}
                </time>
              ) : (
                <>
                  {size}
                  <span className="item__when">
                    {' · '}
                    <time dateTime={item.modified} title={exact}>
                      {when}
                    </time>
                  </span>
                </>
              )}
            </span>
          </div>
          {(selected || multiple) && (
            <Icon
              name={selected ? 'check_circle' : 'radio_button_unchecked'}
              className={selected ? 'item__check' : 'item__check item__check--empty'}
            />
          )}
        </>
      )}
    </div>
  );
});
