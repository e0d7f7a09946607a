import type fs from 'node:fs';
import { FILE_TYPES, type FileItem, type FileType, type Sorting } from '@filebrowser/contract';
import type { AccessView } from '../access/access-view.js';
import type { Pinned } from '../access/anchor.js';
import { loopTurn } from '../../heavy-work.js';
import { adaptiveIo, mapLimit, type AdaptiveIo } from './adaptive-io.js';
import { FIELDS, F_MODE, F_MTIME_NS, F_MTIME_S, F_SIZE, statInto } from './dir-layout.js';
import { dirReader, DirSnapshot, type DirReader } from './dir-snapshot.js';
import { extensionOf, mimeByExtension } from './mime.js';
import type { Opened } from '../access/resolver.js';
import { sortIndexesInTurns, type Sortable, type SortKeys } from './sort.js';
import { renderedListings, type ListingCache } from './listing-cache.js';
import { headerTypes, type TypeCache } from './type-cache.js';
import {
  EMPTY,
  classify,
  emptyFileType,
  readEntrySample,
  readEntrySampleSync,
  readPinnedSample,
  sampleMatters,
  typeFromSample,
} from './file-type.js';
import {
  S_IFBLK,
  S_IFCHR,
  S_IFDIR,
  S_IFIFO,
  S_IFLNK,
  S_IFMT,
  S_IFSOCK,
  goMode,
  goTimeParts,
} from './go-format.js';
import { SubtitleFinder } from './subtitles.js';

/**
 * A folder's listing computed from one snapshot of its entries: rows sorted as indexes, items
 * made only when rendered, links and types resolved through the pinned folder.
 */

/**
 * A listing entry: what sorting needs and the numbers its wire item is made from. Both are made
 * only when the entry is rendered (see `Computed`), so a folder of 100,000 entries never holds
 * 100,000 of them at once when its JSON is streamed.
 */
interface Row extends Sortable {
  mode: number;
  isSymlink: boolean;
  type: FileType;
  subtitles?: string[];
}

export interface ListingOptions {
  /** Read 512-byte headers of entries whose type depends on them (server `typeDetectionByHeader`). */
  readHeader: boolean;
  sorting: Sorting;
  /** st_dev of the folder, when the caller has it (saves a stat). */
  dev?: number | bigint;
}

/** How a listing reaches the disk; tests give their own. */
export interface ListingIo {
  io: AdaptiveIo;
  reader: DirReader;
  types: TypeCache;
  rendered: ListingCache;
  /** Listings with more items than this are streamed (default `STREAM_FROM`). */
  streamFrom?: number;
}

export const defaultListingIo: ListingIo = {
  io: adaptiveIo,
  reader: dirReader,
  types: headerTypes,
  rendered: renderedListings,
};

function rowOf(name: string, data: Float64Array, index: number, isSymlink: boolean, type: FileType): Row {
  const o = index * FIELDS;
  const mode = data[o + F_MODE]!;
  return {
    name,
    size: data[o + F_SIZE]!,
    isDir: type === '' && (mode & S_IFMT) === S_IFDIR,
    mtimeSec: data[o + F_MTIME_S]!,
    mtimeNsec: data[o + F_MTIME_NS]!,
    mode,
    isSymlink,
    type,
  };
}

/** The wire item of a row in the folder whose virtual path ends with `/` as `virtualPrefix`; keys in File Browser's order. */
export function itemOf(virtualPrefix: string, row: Row): FileItem {
  const item: FileItem = {
    path: virtualPrefix + row.name,
    name: row.name,
    size: row.size,
    extension: extensionOf(row.name),
    modified: goTimeParts(row.mtimeSec, row.mtimeNsec),
    mode: goMode(row.mode),
    isDir: row.isDir,
    isSymlink: row.isSymlink,
    type: row.type,
  };
  if (row.subtitles) item.subtitles = row.subtitles;
  return item;
}

/** One stat as a one-entry snapshot. */
function snapshotOf(name: string, st: fs.BigIntStats): DirSnapshot {
  const data = new Float64Array(FIELDS);
  statInto(() => st, '', [name], data, 0, 1);
  return new DirSnapshot([name], data);
}

/** A listing entry that is a symbolic link: resolved through the access (confined, rules checked), metadata from the target. */
async function linkRow(
  access: AccessView,
  virtual: string,
  name: string,
  link: DirSnapshot,
  readHeader: boolean,
  types: TypeCache,
): Promise<Row | undefined> {
  let target: Opened;
  try {
    target = await access.open(virtual);
  } catch {
    return undefined; // escaping (or looping, or hidden by the rules) links are left out of listings
  }
  try {
    if (!target.node) return rowOf(name, link.data, 0, true, 'invalid_link');
    const st = await target.node.statNs().catch(() => undefined);
    if (!st) return undefined;
    const stats = snapshotOf(name, st);
    if (st.isDirectory()) return rowOf(name, stats.data, 0, true, '');
    const mime = mimeByExtension(name);
    const size = Number(st.size);
    let type: FileType;
    if (isSpecialBig(st)) type = 'blob';
    else if (readHeader && sampleMatters(mime, size)) {
      const known = types.get(stats.data, 0, mime);
      if (known === undefined) {
        type = typeFromSample(mime, size, await readPinnedSample(target.node).catch(() => EMPTY));
        types.set(stats.data, 0, mime, type);
      } else type = known;
    } else type = classify(mime, size, EMPTY);
    return rowOf(name, stats.data, 0, true, type);
  } finally {
    await target.close();
  }
}

function isSpecialBig(st: fs.BigIntStats): boolean {
  return st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice();
}

function isSpecialMode(mode: number): boolean {
  const t = mode & S_IFMT;
  return t === S_IFIFO || t === S_IFSOCK || t === S_IFCHR || t === S_IFBLK;
}

interface Listing {
  items: FileItem[];
  numDirs: number;
  numFiles: number;
}

/** A listing entry's type as a number (`FileType`s are few): 0 is an entry left out. */
const CODED_TYPES: readonly FileType[] = ['', '', ...FILE_TYPES];
const TYPE_CODES = new Map<FileType, number>(
  CODED_TYPES.map((t, code) => [t, code]).slice(1) as [FileType, number][],
);
const LEFT_OUT = 0;
const DIR_CODE = TYPE_CODES.get('')!;
const VIDEO_CODE = TYPE_CODES.get('video')!;

/**
 * A listing as its snapshot's numbers and names, a type code per entry and the sorted indexes of
 * the entries listed: a folder of 100,000 entries needs no object per entry (rows, sort keys),
 * which would live for the seconds it takes to send the listing, so long that the collector
 * would move them to the old generation, where they would lie dead until its next full collection.
 * A `Row` is made for one entry at a time, when it is rendered.
 */
export interface Computed {
  names: readonly string[];
  data: Float64Array;
  /** Each snapshot entry's type code (`TYPE_CODES`), `LEFT_OUT` for one not listed. */
  types: Uint8Array;
  /** Indexes of the listed entries, sorted. */
  order: readonly number[];
  /** The rows of the entries that are symbolic links: their numbers are their targets'. */
  links: ReadonlyMap<number, Row>;
  /** Subtitles of the videos that have some. */
  subtitles: ReadonlyMap<number, string[]>;
  /** The folder's virtual path ending with `/`. */
  virtualPrefix: string;
  numDirs: number;
  numFiles: number;
  /** Whether the listing's text depends on nothing but its key and its snapshot (see `ListingCache`). */
  cacheable: boolean;
}

/** The row of snapshot entry `i` of a listing. */
export function rowAt(listing: Computed, i: number): Row {
  const row =
    listing.links.get(i) ?? rowOf(listing.names[i]!, listing.data, i, false, CODED_TYPES[listing.types[i]!]!);
  const subtitles = listing.subtitles.get(i);
  if (subtitles) row.subtitles = subtitles;
  return row;
}

/** What sorting reads of a listing's entries, links' from their targets. */
function sortKeysOf(
  names: readonly string[],
  data: Float64Array,
  types: Uint8Array,
  links: Map<number, Row>,
): SortKeys {
  const num = (field: number) =>
    links.size === 0
      ? (i: number) => data[i * FIELDS + field]!
      : (i: number) => {
          const link = links.get(i);
          if (!link) return data[i * FIELDS + field]!;
          return field === F_SIZE ? link.size : field === F_MTIME_S ? link.mtimeSec : link.mtimeNsec;
        };
  const isDir = (i: number) => types[i] === DIR_CODE && (data[i * FIELDS + F_MODE]! & S_IFMT) === S_IFDIR;
  return {
    name: (i) => names[i]!,
    size: num(F_SIZE),
    mtimeSec: num(F_MTIME_S),
    mtimeNsec: num(F_MTIME_NS),
    isDir: links.size === 0 ? isDir : (i) => links.get(i)?.isDir ?? isDir(i),
  };
}

/** The listing of a snapshot: rules, types, links, subtitles, sorting. */
export async function computeListing(
  access: AccessView,
  dir: Pinned,
  dirVirtual: string,
  opts: ListingOptions,
  dev: number | bigint,
  snapshot: DirSnapshot,
  { io, types: typeCache }: ListingIo,
): Promise<Computed> {
  const { names, data } = snapshot;
  const virtualPrefix = dirVirtual.endsWith('/') ? dirVirtual : dirVirtual + '/';
  let cacheable = true;

  const types = new Uint8Array(names.length);
  const links: number[] = [];
  // Entries whose type waits for their header: indexes, and the MIME types their names give.
  const pending: number[] = [];
  const pendingMimes: string[] = [];
  for (let i = 0; i < names.length; i++) {
    // A folder of 100,000 entries takes a few hundred milliseconds here: other requests get turns.
    if ((i & (YIELD_EVERY - 1)) === YIELD_EVERY - 1) await loopTurn();
    const name = names[i]!;
    if (!access.check(virtualPrefix + name)) continue;
    const mode = data[i * FIELDS + F_MODE]!;
    if (mode === -1) continue; // vanished or unreadable: skipped, as File Browser's fallback listing does
    const kind = mode & S_IFMT;
    if (kind === S_IFLNK) {
      links.push(i);
      continue;
    }
    if (kind === S_IFDIR) {
      types[i] = DIR_CODE;
      continue;
    }
    let type: FileType;
    if (isSpecialMode(mode)) type = 'blob';
    else {
      const mime = mimeByExtension(name);
      const size = data[i * FIELDS + F_SIZE]!;
      if (opts.readHeader && size === 0) {
        // An empty file has no header: opening it would read nothing (66,667 opens, fstats and
        // closes on the main thread for the bench's folder of 100,000 empty files).
        type = emptyFileType(mime);
      } else if (opts.readHeader && sampleMatters(mime, size)) {
        // The bytes may change within one tick of the file's clock without its times changing.
        if (cacheable && !typeCache.settled(data, i)) cacheable = false;
        const known = typeCache.get(data, i, mime);
        if (known === undefined) {
          pending.push(i);
          pendingMimes.push(mime);
          continue;
        }
        type = known;
      } else type = classify(mime, size, EMPTY);
    }
    types[i] = TYPE_CODES.get(type)!;
  }

  if (pending.length > 0) {
    // `k` is a position in `pending`.
    const typeOf = (k: number, sample: Buffer) =>
      typeFromSample(pendingMimes[k]!, data[pending[k]! * FIELDS + F_SIZE]!, sample);
    const found = await io.map(
      dev,
      dir.path,
      pending.map((_, k) => k),
      (k) => {
        let sample = EMPTY;
        try {
          sample = readEntrySampleSync(dir, names[pending[k]!]!);
        } catch {
          // unreadable: typed from the name alone, like the thread-pool path
        }
        return typeOf(k, sample);
      },
      async (k) => typeOf(k, await readEntrySample(dir, names[pending[k]!]!).catch(() => EMPTY)),
    );
    for (let k = 0; k < pending.length; k++) {
      const i = pending[k]!;
      typeCache.set(data, i, pendingMimes[k]!, found[k]!);
      types[i] = TYPE_CODES.get(found[k]!)!;
    }
  }

  const linkRows = new Map<number, Row>();
  if (links.length > 0) {
    // A link's entry depends on its target, which the folder's snapshot does not show.
    cacheable = false;
    await mapLimit(links, 8, async (i) => {
      const name = names[i]!;
      const link = new DirSnapshot([name], data.slice(i * FIELDS, (i + 1) * FIELDS));
      const row = await linkRow(access, virtualPrefix + name, name, link, opts.readHeader, typeCache);
      if (!row) return;
      linkRows.set(i, row);
      types[i] = TYPE_CODES.get(row.type)!;
    });
  }

  const order: number[] = [];
  const keys = sortKeysOf(names, data, types, linkRows);
  const subtitles = new Map<number, string[]>();
  let numDirs = 0;
  let finder: SubtitleFinder | undefined;
  for (let i = 0; i < names.length; i++) {
    if (types[i] === LEFT_OUT) continue;
    order.push(i);
    if (keys.isDir(i)) numDirs++;
    else if (types[i] === VIDEO_CODE) {
      finder ??= new SubtitleFinder(
        access,
        dir,
        dirVirtual,
        names.map((name, i) => ({ name, isDir: (data[i * FIELDS + F_MODE]! & S_IFMT) === S_IFDIR })),
      );
      // Subtitles in `subs` folders depend on those folders' contents.
      if (finder.readsFolders) cacheable = false;
      const subs = await finder.find(names[i]!);
      if (subs.length > 0) subtitles.set(i, subs);
    }
  }
  await sortIndexesInTurns(order, keys, opts.sorting, loopTurn);
  return {
    names,
    data,
    types,
    order,
    links: linkRows,
    subtitles,
    virtualPrefix,
    numDirs,
    numFiles: order.length - numDirs,
    cacheable,
  };
}

/**
 * A pinned folder's visible entries (rules, hidden dotfiles and escaping links filtered out),
 * sorted. The folder is read and its entries stat'ed by `DirReader` through its descriptor (in C
 * where the native addon is loaded, else reader threads on a fast local file system); headers are read through `AdaptiveIo` and remembered in
 * the `TypeCache`.
 */
export async function listDirectory(
  access: AccessView,
  dir: Pinned,
  dirVirtual: string,
  opts: ListingOptions,
  deps: ListingIo = defaultListingIo,
): Promise<Listing> {
  return withFresh(access, dir, dirVirtual, opts, deps, (listing) => ({
    items: listing.order.map((i) => itemOf(listing.virtualPrefix, rowAt(listing, i))),
    numDirs: listing.numDirs,
    numFiles: listing.numFiles,
  }));
}

/**
 * `listDirectory`'s entries with their size and time as numbers, for a caller that renders its
 * own text (WebDAV's PROPFIND would otherwise parse every item's time back from its text).
 */
export async function listDirectoryEntries(
  access: AccessView,
  dir: Pinned,
  dirVirtual: string,
  opts: ListingOptions,
  deps: ListingIo = defaultListingIo,
): Promise<readonly Sortable[]> {
  return withFresh(access, dir, dirVirtual, opts, deps, async (listing) => {
    // A row object per entry: 100,000 of them are made in pieces, other requests going between.
    const rows = new Array<Sortable>(listing.order.length);
    for (let k = 0; k < rows.length; k++) {
      if ((k & (YIELD_EVERY - 1)) === YIELD_EVERY - 1) await loopTurn();
      rows[k] = rowAt(listing, listing.order[k]!);
    }
    return rows;
  });
}

/** `use` of the listing of a fresh snapshot, which is given back once `use` is done with it. */
async function withFresh<T>(
  access: AccessView,
  dir: Pinned,
  dirVirtual: string,
  opts: ListingOptions,
  deps: ListingIo,
  use: (listing: Computed) => T | Promise<T>,
): Promise<T> {
  const dev = opts.dev ?? dir.stat.dev;
  const snapshot = await deps.reader.read(dir, dev, access.owner);
  try {
    return await use(await computeListing(access, dir, dirVirtual, opts, dev, snapshot, deps));
  } finally {
    snapshot.release();
  }
}

/** Entries of the first loop over a snapshot between two turns of the event loop (a power of two). */
const YIELD_EVERY = 4096;
