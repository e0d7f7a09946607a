import type { Selection } from '../../../utils/selection';
import type { ListingRow, ViewMode } from './listing-layout';

/** The keys that move the focus through the listing. */
const MOVES = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End']);

export function isMoveKey(key: string): boolean {
  return MOVES.has(key);
}

/**
 * The index of the entry the focus moves to from `index` when `key` is pressed, or null when the
 * key does not move it (Left and Right in the list, the edges of the listing). The list moves one
 * entry with Up and Down; the tiles also move sideways, and Up and Down keep the column, landing
 * on the last tile of a shorter row, across the Folders/Files headings.
 */
export function moveTarget(
  key: string,
  index: number,
  count: number,
  rows: readonly ListingRow[],
  mode: ViewMode,
): number | null {
  if (count === 0) return null;
  const clamp = (target: number) => (target < 0 || target >= count || target === index ? null : target);
  switch (key) {
    case 'Home':
      return clamp(0);
    case 'End':
      return clamp(count - 1);
    case 'ArrowLeft':
      return mode === 'list' ? null : clamp(index - 1);
    case 'ArrowRight':
      return mode === 'list' ? null : clamp(index + 1);
    case 'ArrowUp':
    case 'ArrowDown': {
      if (mode === 'list') return clamp(index + (key === 'ArrowDown' ? 1 : -1));
      const tiles = rows.filter((row) => row.kind === 'items');
      const at = tiles.findIndex((row) => index >= row.start && index < row.end);
      const current = tiles[at];
      const next = tiles[at + (key === 'ArrowDown' ? 1 : -1)];
      if (!current || !next) return null;
      return clamp(Math.min(next.start + (index - current.start), next.end - 1));
    }
    default:
      return null;
  }
}

/**
 * The selection once the focus moved to `order[index]`: that entry alone, or with Shift the
 * entries from the anchor to it (the anchor stays, so moving back shrinks the range again).
 */
export function focusSelection(
  selection: Selection,
  order: readonly string[],
  index: number,
  extend: boolean,
): Selection {
  const path = order[index];
  if (path === undefined) return selection;
  const anchorIndex = selection.anchor === null ? -1 : order.indexOf(selection.anchor);
  if (!extend || anchorIndex === -1) return { paths: new Set([path]), anchor: path };
  const [from, to] = anchorIndex <= index ? [anchorIndex, index] : [index, anchorIndex];
  return { paths: new Set(order.slice(from, to + 1)), anchor: selection.anchor };
}

/** The virtual row that holds entry `index` (for scrolling it into view). */
export function rowOf(rows: readonly ListingRow[], index: number): number {
  return rows.findIndex((row) => row.kind === 'items' && index >= row.start && index < row.end);
}
