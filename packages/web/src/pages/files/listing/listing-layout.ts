import type { FileItem } from '@filebrowser/contract';
import { VIEW_MODES, type ViewMode } from '@filebrowser/contract';

export type { ViewMode };

/** Unknown or empty view modes (the server stores free text) show the list. */
export function normalizeViewMode(value: string): ViewMode {
  return (VIEW_MODES as readonly string[]).includes(value) ? (value as ViewMode) : 'list';
}

/** The view switch cycles list → mosaic → mosaic gallery → list. */
export function nextViewMode(value: string): ViewMode {
  const current = VIEW_MODES.indexOf(normalizeViewMode(value));
  return VIEW_MODES[(current + 1) % VIEW_MODES.length] as ViewMode;
}

/** The width a mosaic tile is laid out from (File Browser's column width). */
export const MOSAIC_BASE_WIDTH = 280;
/** Gallery tiles are squares; smaller ones fit more pictures in a row. */
export const GALLERY_BASE_WIDTH = 190;
export const TILE_GAP = 12;

/** How many tiles fit in a row of `width` pixels; phones still get two. */
export function columnsFor(mode: ViewMode, width: number): number {
  if (mode === 'list') return 1;
  const base = mode === 'mosaic' ? MOSAIC_BASE_WIDTH : GALLERY_BASE_WIDTH;
  return Math.max(2, Math.floor((width + TILE_GAP) / (base + TILE_GAP)));
}

/** Folders come first, then files, each in the order the server sorted them. */
export function splitEntries(items: readonly FileItem[]): { ordered: FileItem[]; dirCount: number } {
  const dirs: FileItem[] = [];
  const files: FileItem[] = [];
  for (const item of items) (item.isDir ? dirs : files).push(item);
  return { ordered: dirs.concat(files), dirCount: dirs.length };
}

export type ListingRow =
  /** The "Folders" or "Files" heading of the tile views. */
  | { kind: 'section'; section: 'folders' | 'files'; key: string }
  /** Entries `start` to `end - 1` of the ordered list, side by side. */
  | { kind: 'items'; start: number; end: number; key: string };

/**
 * The rows the virtualiser lays out: one entry per row in the list view; in the tile views a
 * heading per section, then the section's entries `columns` to a row.
 */
export function buildRows(
  dirCount: number,
  fileCount: number,
  mode: ViewMode,
  columns: number,
): ListingRow[] {
  const rows: ListingRow[] = [];
  const perRow = mode === 'list' ? 1 : Math.max(1, columns);
  const addSection = (section: 'folders' | 'files', from: number, count: number) => {
    if (count === 0) return;
    if (mode !== 'list') rows.push({ kind: 'section', section, key: `section-${section}` });
    for (let start = from; start < from + count; start += perRow) {
      const end = Math.min(start + perRow, from + count);
      rows.push({ kind: 'items', start, end, key: `row-${start}` });
    }
  };
  addSection('folders', 0, dirCount);
  addSection('files', dirCount, fileCount);
  return rows;
}

export const LIST_ROW_HEIGHT = 52;
/** Narrow screens put size and date on a second line. */
export const LIST_ROW_HEIGHT_NARROW = 62;
export const SECTION_HEIGHT = 44;
export const MOSAIC_TILE_HEIGHT = 68;

/** The height of one virtual row, its gap included. */
export function rowHeight(
  row: ListingRow,
  mode: ViewMode,
  width: number,
  columns: number,
  narrow: boolean,
): number {
  if (row.kind === 'section') return SECTION_HEIGHT;
  if (mode === 'list') return narrow ? LIST_ROW_HEIGHT_NARROW : LIST_ROW_HEIGHT;
  if (mode === 'mosaic') return MOSAIC_TILE_HEIGHT + TILE_GAP;
  const tile = (width - TILE_GAP * (columns - 1)) / columns;
  return Math.max(80, Math.floor(tile)) + TILE_GAP;
}
