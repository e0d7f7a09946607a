import type { Sorting } from '@filebrowser/contract';

export interface Sortable {
  name: string;
  size: number;
  isDir: boolean;
  /** Modification time: whole seconds and nanoseconds (exact ordering, Go's time.Before). */
  mtimeSec: number;
  mtimeNsec: number;
}

const isDigit = (c: number) => c >= 48 && c <= 57;

function digitRun(s: string, from: number): number {
  let i = from;
  while (i < s.length && isDigit(s.charCodeAt(i))) i++;
  return i - from;
}

/** Compares two digit runs as the numbers they spell (any length, leading zeros ignored). */
function compareDigitRuns(a: string, ia: number, la: number, b: string, ib: number, lb: number): number {
  const ea = ia + la;
  const eb = ib + lb;
  while (ia < ea && a.charCodeAt(ia) === 48) ia++;
  while (ib < eb && b.charCodeAt(ib) === 48) ib++;
  if (ea - ia !== eb - ib) return ea - ia < eb - ib ? -1 : 1;
  for (; ia < ea; ia++, ib++) {
    const d = a.charCodeAt(ia) - b.charCodeAt(ib);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** `a.slice(from) < b.slice(from)` without the slices. */
function compareFrom(a: string, b: string, from: number): number {
  const n = Math.min(a.length, b.length);
  for (let i = from; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * Natural order as File Browser's `natural.Less`: skip the common prefix (backing up to the start
 * of a digit run), compare digit runs as numbers, anything else byte-wise ("a.txt" < "a2" < "a10").
 */
export function naturalCompare(a: string, b: string): number {
  let i = 0;
  for (;;) {
    const start = i;
    while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
    while (i > start && isDigit(a.charCodeAt(i - 1))) i--;
    if (i >= a.length || i >= b.length) {
      if (a.length - i === 0 && b.length - i === 0) return 0;
      if (a.length - i === 0) return -1;
      if (b.length - i === 0) return 1;
    }
    const ia = digitRun(a, i);
    const ib = digitRun(b, i);
    if (ia > 0 && ib > 0) {
      const c = compareDigitRuns(a, i, ia, b, i, ib);
      if (c !== 0) return c;
      if (ia === ib && i + ia < a.length && i + ib < b.length) {
        i += ia;
        continue;
      }
    }
    return compareFrom(a, b, i);
  }
}

/**
 * Directories first in both directions; only the names reverse. Names are lower-cased once per
 * item rather than once per comparison.
 */
function sortByName<T extends Sortable>(items: T[], reverse: boolean): T[] {
  const keyed = items.map((item) => ({ item, key: item.name.toLowerCase() }));
  keyed.sort((a, b) => {
    if (a.item.isDir !== b.item.isDir) return a.item.isDir ? -1 : 1;
    const c = naturalCompare(a.key, b.key);
    return reverse ? -c : c;
  });
  for (let i = 0; i < keyed.length; i++) items[i] = keyed[i]!.item;
  return items;
}

/** Byte-wise (UTF-8) name order, the order of File Browser's directory reads. */
function sortByBytes<T extends Sortable>(items: T[]): T[] {
  const keyed = items.map((item) => ({ item, key: Buffer.from(item.name) }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  for (let i = 0; i < keyed.length; i++) items[i] = keyed[i]!.item;
  return items;
}

function byTime(a: Sortable, b: Sortable): number {
  if (a.mtimeSec !== b.mtimeSec) return a.mtimeSec < b.mtimeSec ? -1 : 1;
  return a.mtimeNsec === b.mtimeNsec ? 0 : a.mtimeNsec < b.mtimeNsec ? -1 : 1;
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
      return items.sort((a, b) => (sorting.asc ? byTime(a, b) : byTime(b, a)));
    case 'name':
      return sortByName(items, sorting.asc);
    default:
      if (sorting.asc) return sortByName(items, true);
      return sortByBytes(items);
  }
}
