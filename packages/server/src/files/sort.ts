import type { Sorting } from '@filebrowser/contract';

export interface Sortable {
  name: string;
  size: number;
  isDir: boolean;
  /** Modification time in nanoseconds (exact ordering, Go's time.Before). */
  mtimeNs: bigint;
}

const isDigit = (c: number) => c >= 48 && c <= 57;

function digitRun(s: string, from: number): number {
  let i = from;
  while (i < s.length && isDigit(s.charCodeAt(i))) i++;
  return i - from;
}

/**
 * Natural order as File Browser's `natural.Less`: skip the common prefix (backing up to the start
 * of a digit run), compare digit runs as numbers, anything else byte-wise ("a.txt" < "a2" < "a10").
 */
export function naturalCompare(a: string, b: string): number {
  let i = 0;
  for (;;) {
    const start = i;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    while (i > start && isDigit(a.charCodeAt(i - 1))) i--;
    if (i >= a.length || i >= b.length) {
      if (a.length - i === 0 && b.length - i === 0) return 0;
      if (a.length - i === 0) return -1;
      if (b.length - i === 0) return 1;
    }
    const ia = digitRun(a, i);
    const ib = digitRun(b, i);
    if (ia > 0 && ib > 0) {
      const na = BigInt(a.slice(i, i + ia));
      const nb = BigInt(b.slice(i, i + ib));
      if (na !== nb) return na < nb ? -1 : 1;
      if (ia === ib && i + ia < a.length && i + ib < b.length) {
        i += ia;
        continue;
      }
    }
    const ra = a.slice(i);
    const rb = b.slice(i);
    return ra < rb ? -1 : ra > rb ? 1 : 0;
  }
}

/** Directories first in both directions; only the names reverse. */
function byName(a: Sortable, b: Sortable, reverse: boolean): number {
  if (a.isDir !== b.isDir) return a.isDir ? -1 : 1;
  const c = naturalCompare(a.name.toLowerCase(), b.name.toLowerCase());
  return reverse ? -c : c;
}

const DIR_SIZE_OFFSET = 2 ** 31;

/**
 * Sorts a listing as File Browser does (contract 5.2). The `asc` flag is inverted for names
 * (asc=false gives A→Z, asc=true Z→A): a wire quirk the old web client compensates for, kept on
 * purpose. Unknown `by` with asc=false keeps the directory's byte-wise name order.
 */
export function sortListing<T extends Sortable>(items: T[], sorting: Sorting): T[] {
  switch (sorting.by) {
    case 'size': {
      // Directories are offset by -2^31 so that they sort last when largest comes first.
      const key = (i: Sortable) => (i.isDir ? i.size - DIR_SIZE_OFFSET : i.size);
      return items.sort((a, b) => (sorting.asc ? key(a) - key(b) : key(b) - key(a)));
    }
    case 'modified':
      return items.sort((a, b) => {
        const d = sorting.asc ? a.mtimeNs - b.mtimeNs : b.mtimeNs - a.mtimeNs;
        return d === 0n ? 0 : d < 0n ? -1 : 1;
      });
    case 'name':
      return items.sort((a, b) => byName(a, b, sorting.asc));
    default:
      if (sorting.asc) return items.sort((a, b) => byName(a, b, true));
      return items.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  }
}
