import type { FileInfo, FileItem } from '@filebrowser/contract';
import { useWindowVirtualizer } from '@tanstack/react-virtual';
import {
  useCallback,
  useLayoutEffect,
  useMemo,
  useEffect,
  useRef,
  useState,
  type DragEvent,
  type RefObject,
} from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { EmptyState } from '../../../components/EmptyState';
import { useIsNarrow } from '../../../hooks/use-media-query';
import { useUser } from '../../../hooks/use-user';
import { startup } from '../../../startup';
import { useClipboardStore } from '../../../stores/clipboard';
import { useFilesStore } from '../../../stores/files';
import { filesRoute } from '../../../utils/paths';
import { clickSelection, isDoubleClick, type LastClick } from '../../../utils/selection';
import { isInside, moveIntoFolder } from '../operations';
import { ListingItem, type ItemInteractions } from './ListingItem';
import { focusSelection, isMoveKey, moveTarget, rowOf } from './listing-keys';
import {
  buildRows,
  columnsFor,
  normalizeViewMode,
  rowHeight,
  splitEntries,
  type ListingRow,
} from './listing-layout';
import { SortHeader } from './SortHeader';

/** The drag data type of entries dragged inside the listing (files from the desktop carry "Files"). */
export const ENTRIES_DRAG_TYPE = 'application/x-filebrowser-entries';

/** Width of an element, followed as the window or the sidebar changes it. */
function useElementWidth(ref: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    const measure = () => setWidth(Math.floor(element.getBoundingClientRect().width));
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}

/**
 * Where the rows start, measured from the top of the document: the window virtualiser needs it
 * to know which rows are in view. What sits above (breadcrumbs, the selection bar) can change it.
 */
function useScrollMargin(ref: RefObject<HTMLElement | null>): number {
  const [margin, setMargin] = useState(0);
  const measure = useCallback(() => {
    const element = ref.current;
    if (!element) return;
    const top = Math.round(element.getBoundingClientRect().top + window.scrollY);
    setMargin((current) => (current === top ? current : top));
  }, [ref]);
  useLayoutEffect(() => {
    measure();
  });
  useLayoutEffect(() => {
    window.addEventListener('resize', measure);
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(measure);
    observer?.observe(document.body);
    return () => {
      window.removeEventListener('resize', measure);
      observer?.disconnect();
    };
  }, [measure]);
  return margin;
}

/**
 * The entries of a folder as a list, a mosaic or a gallery. Only the rows in view are in the
 * page (virtualised against the window's scroll), so a folder of 100,000 entries scrolls as
 * smoothly as one of ten.
 */
export function Listing({ folder }: { folder: FileInfo }) {
  const { t } = useTranslation();
  const user = useUser();
  const navigate = useNavigate();
  const narrow = useIsNarrow();
  const mode = normalizeViewMode(user.viewMode);
  const items = useMemo(() => folder.items ?? [], [folder.items]);
  const { ordered, dirCount } = useMemo(() => splitEntries(items), [items]);
  const order = useMemo(() => ordered.map((item) => item.path), [ordered]);

  const bodyRef = useRef<HTMLDivElement | null>(null);
  const width = useElementWidth(bodyRef);
  const scrollMargin = useScrollMargin(bodyRef);
  const columns = columnsFor(mode, width);
  const rows = useMemo(
    () => buildRows(dirCount, ordered.length - dirCount, mode, columns),
    [dirCount, ordered.length, mode, columns],
  );
  const estimateSize = useCallback(
    (index: number) => rowHeight(rows[index] as ListingRow, mode, width, columns, narrow),
    [rows, mode, width, columns, narrow],
  );
  const virtualizer = useWindowVirtualizer({
    count: rows.length,
    estimateSize,
    overscan: 6,
    scrollMargin,
    getItemKey: (index) => rows[index]?.key ?? index,
  });

  const clipboard = useClipboardStore((state) => state.clipboard);
  const cutPaths = useMemo(
    () => new Set(clipboard?.key === 'x' ? clipboard.items.map((item) => item.from) : []),
    [clipboard],
  );

  /** The entry that is the listing's Tab stop: the one last focused in this folder. */
  const [active, setActiveEntry] = useState({ folder: folder.path, index: 0 });
  const setActive = useCallback(
    (index: number) => setActiveEntry({ folder: folder.path, index }),
    [folder.path],
  );
  const tabStop = active.folder === folder.path ? Math.min(active.index, Math.max(0, ordered.length - 1)) : 0;
  /** An entry the arrow keys moved to that was not in the page yet; focused once rendered. */
  const pendingFocus = useRef<number | null>(null);
  // The key handler reads the layout of the moment without being rebuilt (and every entry
  // re-rendered) when a resize changes the columns.
  const layout = useRef({ rows, mode });
  layout.current = { rows, mode };

  const focusEntry = useCallback((index: number): boolean => {
    const link = bodyRef.current?.querySelector<HTMLElement>(`.item[data-index="${index}"] .item__name`);
    if (!link) return false;
    link.focus();
    return true;
  }, []);
  useEffect(() => {
    if (pendingFocus.current !== null && focusEntry(pendingFocus.current)) pendingFocus.current = null;
  });

  const lastClick = useRef<LastClick | null>(null);
  /** The entries being dragged, from dragstart until the drop. */
  const dragged = useRef<FileItem[]>([]);

  const interactions = useMemo<ItemInteractions>(() => {
    const open = (item: FileItem) => void navigate(filesRoute(item.path, item.isDir));
    const entry = (index: number) => ordered[index];
    return {
      click: (event, index) => {
        event.preventDefault();
        const item = entry(index);
        if (!item) return;
        // A click without a pointer (Enter on the focused name) opens.
        if (event.detail === 0) {
          open(item);
          return;
        }
        const { selection, multiple, setSelection } = useFilesStore.getState();
        const modifierHeld = event.ctrlKey || event.metaKey || event.shiftKey;
        const now = performance.now();
        if (!modifierHeld) {
          if (user.singleClick && !multiple) {
            open(item);
            return;
          }
          if (isDoubleClick(lastClick.current, item.path, now)) {
            lastClick.current = null;
            open(item);
            return;
          }
        }
        // Only two plain clicks make a double click: a Ctrl or Shift click just before does not.
        lastClick.current = modifierHeld ? null : { path: item.path, time: now };
        setSelection(
          clickSelection(selection, order, index, {
            toggle: event.ctrlKey || event.metaKey || multiple,
            range: event.shiftKey,
          }),
        );
        // The arrow keys go on from the entry clicked.
        if (event.currentTarget instanceof HTMLElement) {
          event.currentTarget.querySelector<HTMLElement>('.item__name')?.focus({ preventScroll: true });
        }
      },
      keyDown: (event, index) => {
        if (event.key === ' ') {
          event.preventDefault();
          const { selection, setSelection } = useFilesStore.getState();
          setSelection(clickSelection(selection, order, index, { toggle: true, range: event.shiftKey }));
          return;
        }
        if (!isMoveKey(event.key) || event.altKey || event.ctrlKey || event.metaKey) return;
        const target = moveTarget(event.key, index, order.length, layout.current.rows, layout.current.mode);
        if (target === null) return;
        event.preventDefault();
        const { selection, multiple, setSelection } = useFilesStore.getState();
        // The selection follows the focus, as in File Browser's client; in "select multiple"
        // mode it stays, and Space picks the entries.
        if (!multiple) setSelection(focusSelection(selection, order, target, event.shiftKey));
        setActive(target);
        if (focusEntry(target)) return;
        pendingFocus.current = target;
        virtualizer.scrollToIndex(rowOf(layout.current.rows, target), { align: 'auto' });
      },
      focus: setActive,
      dragStart: (event, index) => {
        const item = entry(index);
        if (!item || !user.perm.rename) {
          event.preventDefault();
          return;
        }
        const { selection, setSelection } = useFilesStore.getState();
        // Dragging an entry outside the selection drags that entry alone.
        const paths = selection.paths.has(item.path) ? selection.paths : new Set([item.path]);
        if (paths !== selection.paths) setSelection({ paths, anchor: item.path });
        dragged.current = ordered.filter((candidate) => paths.has(candidate.path));
        event.dataTransfer.effectAllowed = 'move';
        event.dataTransfer.setData(ENTRIES_DRAG_TYPE, JSON.stringify([...paths]));
      },
      canDrop: (event: DragEvent, target: FileItem) =>
        target.isDir &&
        user.perm.rename &&
        event.dataTransfer.types.includes(ENTRIES_DRAG_TYPE) &&
        dragged.current.length > 0 &&
        // Not onto itself, nor into a folder inside one of the dragged folders.
        !dragged.current.some((item) => isInside(target.path, item.path)),
      drop: (_event, target) => {
        const items = dragged.current;
        dragged.current = [];
        void moveIntoFolder(items, target, folder.path);
      },
    };
  }, [
    navigate,
    ordered,
    order,
    user.singleClick,
    user.perm.rename,
    folder.path,
    focusEntry,
    virtualizer,
    setActive,
  ]);

  if (ordered.length === 0) return <EmptyState />;

  const thumbnails = startup.EnableThumbs && user.perm.download && mode !== 'list';
  const modeClass = mode === 'list' ? 'list' : mode === 'mosaic' ? 'mosaic' : 'gallery';
  const renderItem = (item: FileItem, index: number, rowIndex?: number) => (
    <ListingItem
      key={item.path}
      item={item}
      index={index}
      rowIndex={rowIndex}
      mode={mode}
      draggable={user.perm.rename}
      cut={cutPaths.has(item.path)}
      dateFormat={user.dateFormat}
      thumbnails={thumbnails}
      interactions={interactions}
      tabbable={index === tabStop}
    />
  );

  return (
    <div
      className={`listing listing--${modeClass}`}
      role="grid"
      aria-label={t('files.listing')}
      aria-multiselectable="true"
      aria-rowcount={rows.length + 1}
      onClick={(event) => {
        // A click on the empty space between entries clears the selection.
        if (event.target instanceof Element && event.target.closest('.item, .listing__header')) return;
        const { multiple, clearSelection } = useFilesStore.getState();
        if (!multiple) clearSelection();
      }}
    >
      <SortHeader sorting={folder.sorting ?? { by: 'name', asc: false }} />
      <div ref={bodyRef} className="listing__body" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((virtual) => {
          const row = rows[virtual.index];
          if (!row) return null;
          const style = { height: virtual.size, transform: `translateY(${virtual.start - scrollMargin}px)` };
          if (row.kind === 'section') {
            return (
              <div
                key={virtual.key}
                role="row"
                aria-rowindex={virtual.index + 2}
                className="listing__row listing__section"
                style={style}
              >
                <div role="gridcell">
                  <h2>{row.section === 'folders' ? t('files.folders') : t('files.files')}</h2>
                </div>
              </div>
            );
          }
          if (mode === 'list') {
            const item = ordered[row.start];
            return item ? (
              <div key={virtual.key} className="listing__row" style={style}>
                {renderItem(item, row.start, virtual.index + 2)}
              </div>
            ) : null;
          }
          return (
            <div
              key={virtual.key}
              role="row"
              aria-rowindex={virtual.index + 2}
              className="listing__row listing__tiles"
              style={{ ...style, gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))` }}
            >
              {ordered.slice(row.start, row.end).map((item, offset) => renderItem(item, row.start + offset))}
            </div>
          );
        })}
      </div>
    </div>
  );
}
