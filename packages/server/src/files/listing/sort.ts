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

type Compare = (a: number, b: number) => number;

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
 * The order of File Browser's listings (contract 5.2): by name (`reverse` or not), or by a
 * comparison of indexes. By name, directories come first in both directions and only the names
 * reverse. The `asc` flag is inverted for names (asc=false gives A→Z, asc=true Z→A): a wire quirk
 * the old web client compensates for, kept on purpose. Unknown `by` with asc=false keeps the
 * directory's byte-wise (UTF-8) name order, the order of File Browser's directory reads.
 */
function orderOf(order: readonly number[], keys: SortKeys, sorting: Sorting): { reverse: boolean } | Compare {
  switch (sorting.by) {
    case 'size': {
      // Directories are offset by -2^31 so that they sort last when largest comes first.
      const key = (i: number) => (keys.isDir(i) ? keys.size(i) - DIR_SIZE_OFFSET : keys.size(i));
      return (a, b) => (sorting.asc ? key(a) - key(b) : key(b) - key(a));
    }
    case 'modified':
      return (a, b) => (sorting.asc ? byTime(keys, a, b) : byTime(keys, b, a));
    case 'name':
      return { reverse: sorting.asc };
    default: {
      if (sorting.asc) return { reverse: true };
      const bytes = new Array<Buffer>(endOf(order));
      for (const i of order) bytes[i] = Buffer.from(keys.name(i));
      return (a, b) => Buffer.compare(bytes[a]!, bytes[b]!);
    }
  }
}

/**
 * The keys of a name order: names lower-cased once per entry rather than once per comparison (an
 * already lower-case name is its own key) and folder marks, for `order[from..to)`.
 */
class NameKeys {
  readonly lower: string[];
  readonly dirs: Uint8Array;

  constructor(order: readonly number[]) {
    const end = endOf(order);
    this.lower = new Array<string>(end);
    this.dirs = new Uint8Array(end);
  }

  fill(order: readonly number[], keys: SortKeys, from: number, to: number): void {
    for (let k = from; k < to; k++) {
      const i = order[k]!;
      this.lower[i] = keys.name(i).toLowerCase();
      if (keys.isDir(i)) this.dirs[i] = 1;
    }
  }

  compare(reverse: boolean): Compare {
    const { lower, dirs } = this;
    return (a, b) => {
      if (dirs[a] !== dirs[b]) return dirs[a] ? -1 : 1;
      const c = naturalCompare(lower[a]!, lower[b]!);
      return reverse ? -c : c;
    };
  }
}

/**
 * Sorts the indexes `order` (in place, stably: equal entries keep their order) of a listing's
 * entries as File Browser does (see `orderOf`).
 */
export function sortIndexes(order: number[], keys: SortKeys, sorting: Sorting): number[] {
  const how = orderOf(order, keys, sorting);
  if (typeof how === 'function') return order.sort(how);
  const names = new NameKeys(order);
  names.fill(order, keys, 0, order.length);
  return order.sort(names.compare(how.reverse));
}

/** Indexes sorted in one go by `sortIndexesInTurns`, and merged between two turns. */
const RUN = 4096;

/**
 * `sortIndexes` for a big listing, in pieces with a `turn` between two: runs of `RUN` indexes
 * sorted one at a time, then merged pairwise, `RUN` indexes per piece (stable: of equal entries
 * the earlier run's goes first). 100,000 names took one stretch of about 0.1 s, during which no
 * other request was answered.
 */
export async function sortIndexesInTurns(
  order: number[],
  keys: SortKeys,
  sorting: Sorting,
  turn: () => Promise<void>,
): Promise<number[]> {
  const n = order.length;
  if (n <= RUN) return sortIndexes(order, keys, sorting);
  const how = orderOf(order, keys, sorting);
  let compare: Compare;
  if (typeof how === 'function') compare = how;
  else {
    // The keys of a name order (100,000 lower-cased names) are made in runs too.
    const names = new NameKeys(order);
    for (let from = 0; from < n; from += RUN) {
      await turn();
      names.fill(order, keys, from, Math.min(n, from + RUN));
    }
    compare = names.compare(how.reverse);
  }
  for (let from = 0; from < n; from += RUN) {
    await turn();
    const run = order.slice(from, Math.min(n, from + RUN)).sort(compare);
    for (let k = 0; k < run.length; k++) order[from + k] = run[k]!;
  }
  let source = order;
  let target = new Array<number>(n);
  for (let width = RUN; width < n; width *= 2) {
    let budget = RUN;
    for (let left = 0; left < n; left += 2 * width) {
      const mid = Math.min(n, left + width);
      const right = Math.min(n, left + 2 * width);
      let i = left;
      let j = mid;
      for (let k = left; k < right; k++) {
        if (--budget === 0) {
          await turn();
          budget = RUN;
        }
        target[k] =
          i < mid && (j >= right || compare(source[i]!, source[j]!) <= 0) ? source[i++]! : source[j++]!;
      }
    }
    [source, target] = [target, source];
  }
  if (source !== order) for (let k = 0; k < n; k++) order[k] = source[k]!;
  return order;
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
