import type fs from 'node:fs';

/**
 * What the reader threads (dir-reader-worker.ts) and the main thread (dir-snapshot.ts) agree on:
 * the layout of a folder's numbers in a Float64Array, the kinds of a search's entries, the
 * messages between them, and the two functions both sides run.
 *
 * A folder's entries take `FIELDS` numbers each. Times are split into seconds and nanoseconds and
 * the inode into two 32-bit halves, so every number is exact in a double.
 */
export const FIELDS = 9;
/** st_mode, or -1 when the entry could not be stat'ed (vanished or unreadable). */
export const F_MODE = 0;
export const F_SIZE = 1;
export const F_MTIME_S = 2;
export const F_MTIME_NS = 3;
export const F_CTIME_S = 4;
export const F_CTIME_NS = 5;
export const F_INO_HI = 6;
export const F_INO_LO = 7;
export const F_DEV = 8;

const GIGA = 1000000000n;

/** Writes the lstat of `names[from..to)` into `data`. */
export function statInto(
  lstat: (p: string) => fs.BigIntStats | undefined,
  prefix: string,
  names: readonly string[],
  data: Float64Array,
  from: number,
  to: number,
): void {
  for (let i = from; i < to; i++) {
    const o = i * FIELDS;
    let st: fs.BigIntStats | undefined;
    try {
      st = lstat(prefix + names[i]);
    } catch {
      st = undefined;
    }
    if (!st) {
      data[o + F_MODE] = -1;
      continue;
    }
    data[o + F_MODE] = Number(st.mode);
    data[o + F_SIZE] = Number(st.size);
    data[o + F_MTIME_S] = Number(st.mtimeNs / GIGA);
    data[o + F_MTIME_NS] = Number(st.mtimeNs % GIGA);
    data[o + F_CTIME_S] = Number(st.ctimeNs / GIGA);
    data[o + F_CTIME_NS] = Number(st.ctimeNs % GIGA);
    data[o + F_INO_HI] = Number(st.ino >> 32n);
    data[o + F_INO_LO] = Number(st.ino & 0xffffffffn);
    data[o + F_DEV] = Number(st.dev);
  }
}

/** What a search keeps of a folder: the entries worth a look, each with its kind (`KIND_*`). */
export interface FolderScan {
  names: string[];
  kinds: number[];
}
/** A name that passed the filter and is neither a folder nor a link. */
export const KIND_MATCH = 0;
export const KIND_DIR = 1;
export const KIND_LINK = 2;

/**
 * Keeps a folder's sub-folders and links (the walk needs them whatever their names) and the other
 * entries whose names pass `keep`.
 */
export function pickEntries(dirents: readonly fs.Dirent[], keep: (name: string) => boolean): FolderScan {
  const names: string[] = [];
  const kinds: number[] = [];
  for (const d of dirents) pick(d, keep, names, kinds);
  return { names, kinds };
}

function pick(d: fs.Dirent, keep: (name: string) => boolean, names: string[], kinds: number[]): void {
  const kind = d.isDirectory() ? KIND_DIR : d.isSymbolicLink() ? KIND_LINK : KIND_MATCH;
  if (kind !== KIND_MATCH || keep(d.name)) {
    names.push(d.name);
    kinds.push(kind);
  }
}

/**
 * `pickEntries` for an open folder read entry by entry, in the same order as `readdir` gives:
 * names in byte order. `readdir` (libuv's scandir) sorts every name of the folder before the
 * first is seen; reading in the file system's order and sorting only the entries kept does the
 * same for a fraction of the cost (a folder of 100,000 files: 45 ms of CPU instead of 85, most
 * of a search's wait for its first hit there). Returns the entries read as `count`.
 */
export function pickFromDir(dir: fs.Dir, keep: (name: string) => boolean): FolderScan & { count: number } {
  const names: string[] = [];
  const kinds: number[] = [];
  let count = 0;
  for (let d = dir.readSync(); d !== null; d = dir.readSync()) {
    count++;
    pick(d, keep, names, kinds);
  }
  const order = names.map((_, i) => i).sort(nameOrder(names));
  return { names: order.map((i) => names[i]!), kinds: order.map((i) => kinds[i]!), count };
}

/**
 * Compares `names[i]` and `names[j]` as scandir does (strcmp on the UTF-8 bytes, that is code
 * point order). JavaScript compares UTF-16 units, which agrees unless a name holds a character
 * above U+D7FF: then surrogates (characters above U+FFFF) must come after U+E000-U+FFFF.
 */
function nameOrder(names: readonly string[]): (i: number, j: number) => number {
  if (!names.some((n) => /[\ud800-\uffff]/.test(n))) {
    return (i, j) => (names[i]! < names[j]! ? -1 : names[i]! > names[j]! ? 1 : 0);
  }
  return (i, j) => {
    const a = names[i]!;
    const b = names[j]!;
    const n = Math.min(a.length, b.length);
    for (let k = 0; k < n; k++) {
      const x = a.charCodeAt(k);
      const y = b.charCodeAt(k);
      if (x !== y) return codePointRank(x) - codePointRank(y);
    }
    return a.length - b.length;
  };
}

/** A UTF-16 unit's place in code point order: surrogates after U+E000-U+FFFF. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}

/**
 * A job for a reader thread: list `dir` (names and numbers), or with `filter` (a name filter's
 * JSON, see name-filter.ts) scan it for a search; or a buffer given back for reuse.
 */
export type ReaderMessage =
  /** `size`: the folder's `st_size` when the sender knows it (a search's pinned folder). */
  { id: number; dir: string; filter?: string; size?: number } | { recycle: ArrayBuffer };

/** A reader thread's answer to job `id`. */
export interface ReaderReply {
  id: number;
  scan?: FolderScan;
  /** The names joined with NUL, as UTF-8 (a listing). */
  bytes?: Uint8Array;
  count?: number;
  data?: Float64Array;
  /** Time the thread spent on the job, less the time it waited for a core. */
  ms?: number;
  error?: { code?: string; message: string };
}

/**
 * Reader threads keep the buffers given back to them up to this size for the next folder (those
 * of a 10,000-entry folder are 720 and 150 KB); bigger ones would be held for a rare folder.
 */
export const SPARE_MAX_BYTES = 2 * 1024 * 1024;
