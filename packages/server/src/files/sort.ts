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
 * What sorting reads of the entry at an index: a listing of 100,000 entries is sorted as indexes
 * into its snapshot, so that it needs no object per entry.
 */
export interface SortKeys {
  name(i: number): string;
  size(i: number): number;
  isDir(i: number): boolean;
  mtimeSec(i: number): number;
  mtimeNsec(i: number): number;
}

/**
 * Directories first in both directions; only the names reverse. Names are lower-cased once per
 * entry rather than once per comparison (an already lower-case name is its own key).
 */
function sortByName(order: number[], keys: SortKeys, reverse: boolean): number[] {
  const end = endOf(order);
  const lower = new Array<string>(end);
  const dirs = new Uint8Array(end);
  for (const i of order) {
    lower[i] = keys.name(i).toLowerCase();
    if (keys.isDir(i)) dirs[i] = 1;
  }
  return order.sort((a, b) => {
    if (dirs[a] !== dirs[b]) return dirs[a] ? -1 : 1;
    const c = naturalCompare(lower[a]!, lower[b]!);
    return reverse ? -c : c;
  });
}

/** Byte-wise (UTF-8) name order, the order of File Browser's directory reads. */
function sortByBytes(order: number[], keys: SortKeys): number[] {
  const bytes = new Array<Buffer>(endOf(order));
  for (const i of order) bytes[i] = Buffer.from(keys.name(i));
  return order.sort((a, b) => Buffer.compare(bytes[a]!, bytes[b]!));
}

/** One past the largest index. */
function endOf(order: readonly number[]): number {
  let end = 0;
  for (const i of order) if (i >= end) end = i + 1;
  return end;
}

function byTime(keys: SortKeys, a: number, b: number): number {
  const sa = keys.mtimeSec(a);
  const sb = keys.mtimeSec(b);
  if (sa !== sb) return sa < sb ? -1 : 1;
  const na = keys.mtimeNsec(a);
  const nb = keys.mtimeNsec(b);
  return na === nb ? 0 : na < nb ? -1 : 1;
}

const DIR_SIZE_OFFSET = 2 ** 31;

/**
 * Sorts the indexes `order` (in place, stably: equal entries keep their order) of a listing's
 * entries as File Browser does (contract 5.2). The `asc` flag is inverted for names (asc=false
 * gives A→Z, asc=true Z→A): a wire quirk the old web client compensates for, kept on purpose.
 * Unknown `by` with asc=false keeps the directory's byte-wise name order.
 */
export function sortIndexes(order: number[], keys: SortKeys, sorting: Sorting): number[] {
  switch (sorting.by) {
    case 'size': {
      // Directories are offset by -2^31 so that they sort last when largest comes first.
      const key = (i: number) => (keys.isDir(i) ? keys.size(i) - DIR_SIZE_OFFSET : keys.size(i));
      return order.sort((a, b) => (sorting.asc ? key(a) - key(b) : key(b) - key(a)));
    }
    case 'modified':
      return order.sort((a, b) => (sorting.asc ? byTime(keys, a, b) : byTime(keys, b, a)));
    case 'name':
      return sortByName(order, keys, sorting.asc);
    default:
      if (sorting.asc) return sortByName(order, keys, true);
      return sortByBytes(order, keys);
  }
}

/** `sortIndexes` of a list of entries, in place. */
export function sortListing<T extends Sortable>(items: T[], sorting: Sorting): T[] {
  const keys: SortKeys = {
    name: (i) => items[i]!.name,
    size: (i) => items[i]!.size,
    isDir: (i) => items[i]!.isDir,
    mtimeSec: (i) => items[i]!.mtimeSec,
    mtimeNsec: (i) => items[i]!.mtimeNsec,
  };
  const order = sortIndexes(
    items.map((_, i) => i),
    keys,
    sorting,
  );
  const sorted = order.map((i) => items[i]!);
  for (let i = 0; i < sorted.length; i++) items[i] = sorted[i]!;
  return items;
}
