import type { Sorting } from '@filebrowser/contract';

export type SortField = 'name' | 'size' | 'modified';
export const SORT_COLUMNS: readonly SortField[] = ['name', 'size', 'modified'];

/**
 * Whether the listing runs A→Z, smallest or oldest first. The server inverts the flag for names
 * (asc=false gives A→Z, contract 5.2), which the header has to undo to show the right arrow.
 */
export function isAscending(sorting: Sorting): boolean {
  return sorting.by === 'name' ? !sorting.asc : sorting.asc;
}

/**
 * The sorting after a click on a column: the sorted column flips its direction; another column
 * starts with A→Z for names and largest or newest first for sizes and dates.
 */
export function nextSorting(current: Sorting, by: SortField): Sorting {
  if (current.by === by) return { by, asc: !current.asc };
  return { by, asc: false };
}

/** The stored sorting for a column and a direction, with the server's inversion for names. */
export function sortingFor(by: string, ascending: boolean): Sorting {
  return { by, asc: by === 'name' ? !ascending : ascending };
}
