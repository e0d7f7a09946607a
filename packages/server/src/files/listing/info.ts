import fs from 'node:fs';
import type fsp from 'node:fs/promises';
import { deflateRawSync } from 'node:zlib';
import {
  FILE_TYPES,
  TEXT_CONTENT_LIMIT,
  type FileInfo,
  type FileItem,
  type FileType,
  type Sorting,
} from '@filebrowser/contract';
import { notFound } from '../../errors.js';
import type { AccessView as FileAccess } from '../access/access-view.js';
import {
  openEntryFile,
  openEntryFileSync,
  openPinnedFile,
  readFolderTypes,
  statEntry,
  type Pinned,
} from '../access/anchor.js';
import { loopTurn } from '../../heavy-work.js';
import { adaptiveIo, mapLimit, type AdaptiveIo } from './adaptive-io.js';
import { FIELDS, F_MODE, F_MTIME_NS, F_MTIME_S, F_SIZE, statInto } from './dir-layout.js';
import { dirReader, DirSnapshot, type DirReader } from './dir-snapshot.js';
import { extensionOf, isBinary, mimeByExtension, sniff } from './mime.js';
import { isSpecial, joinVirtual, type Opened } from '../access/resolver.js';
import { sortIndexesInTurns, type Sortable, type SortKeys } from './sort.js';
import { renderedListings, type ListingCache } from './listing-cache.js';
import { headerTypes, type TypeCache } from './type-cache.js';

/** The `text` type stops at 10 MiB (contract 3.1); content stops earlier, at TEXT_CONTENT_LIMIT. */
export const TEXT_LIMIT = 10 * 1024 * 1024;
const SAMPLE_SIZE = 512;

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const S_IFIFO = 0o010000;
const S_IFSOCK = 0o140000;
const S_IFCHR = 0o020000;
const S_IFBLK = 0o060000;

/** Go's os.FileMode encoding of a POSIX mode: permission bits plus Go's type bits (contract 2.4). */
export function goMode(mode: number | bigint): number {
  const m = Number(mode);
  let out = m & 0o777;
  if (m & 0o4000) out |= 1 << 23;
  if (m & 0o2000) out |= 1 << 22;
  if (m & 0o1000) out |= 1 << 20;
  switch (m & S_IFMT) {
    case S_IFDIR:
      out |= 1 << 31;
      break;
    case S_IFLNK:
      out |= 1 << 27;
      break;
    case S_IFIFO:
      out |= 1 << 25;
      break;
    case S_IFSOCK:
      out |= 1 << 24;
      break;
    case S_IFCHR:
      out |= (1 << 26) | (1 << 21);
      break;
    case S_IFBLK:
      out |= 1 << 26;
      break;
  }
  return out >>> 0;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Date, time and offset text by Unix second: files written together share their second. */
const secondTexts = new Map<number, { head: string; zone: string }>();

/**
 * Go's RFC 3339 with nanoseconds (trailing zeros trimmed) in the server's local offset, "Z" for
 * UTC, from whole seconds and nanoseconds (both exact numbers; `nsec` may be negative for times
 * before 1970, as a truncating division leaves it).
 */
export function goTimeParts(sec: number, nsec: number): string {
  if (nsec < 0) {
    sec -= 1;
    nsec += 1e9;
  }
  let text = secondTexts.get(sec);
  if (!text) {
    const d = new Date(sec * 1000);
    const offset = -d.getTimezoneOffset();
    const head = `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    const abs = Math.abs(offset);
    const zone =
      offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
    text = { head, zone };
    if (secondTexts.size >= 4096) secondTexts.clear();
    secondTexts.set(sec, text);
  }
  if (nsec === 0) return text.head + text.zone;
  const frac = String(nsec).padStart(9, '0');
  let end = frac.length;
  while (frac.charCodeAt(end - 1) === 48) end--;
  return `${text.head}.${frac.slice(0, end)}${text.zone}`;
}

/** `goTimeParts` of a time in nanoseconds. */
export function goTime(ns: bigint): string {
  const secs = ns / 1_000_000_000n - (ns < 0n && ns % 1_000_000_000n !== 0n ? 1n : 0n);
  return goTimeParts(Number(secs), Number(ns - secs * 1_000_000_000n));
}

/** The ETag File Browser sends after a write: hex of the mtime in ns, then hex of the size. */
export function etagOf(st: fs.BigIntStats): string {
  return `"${st.mtimeNs.toString(16)}${st.size.toString(16)}"`;
}

/** Up to the first 512 bytes of an open file. */
async function sampleOf(fh: fsp.FileHandle): Promise<Buffer> {
  const buf = Buffer.alloc(SAMPLE_SIZE);
  const { bytesRead } = await fh.read(buf, 0, SAMPLE_SIZE, 0);
  return buf.subarray(0, bytesRead);
}

/** The first bytes of the entry `name` of a pinned folder (no link followed, no pipe waited on). */
export async function readEntrySample(folder: Pinned, name: string): Promise<Buffer> {
  const fh = await openEntryFile(folder, name);
  try {
    return await sampleOf(fh);
  } finally {
    await fh.close();
  }
}

/** The first bytes of a pinned file. */
export async function readPinnedSample(node: Pinned): Promise<Buffer> {
  const fh = await openPinnedFile(node);
  try {
    return await sampleOf(fh);
  } finally {
    await fh.close();
  }
}

/** What the type of a MIME type's files is before any sample is looked at. */
type MimeClass = 'video' | 'audio' | 'image' | 'pdf' | 'text' | 'other';

const mimeClasses = new Map<string, MimeClass>();

/** Contract 3.1 step 4 on the MIME type alone; memoised, there are only so many MIME types. */
function mimeClass(mime: string): MimeClass {
  let cls = mimeClasses.get(mime);
  if (cls === undefined) {
    if (mime.startsWith('video')) cls = 'video';
    else if (mime.startsWith('audio')) cls = 'audio';
    else if (mime.startsWith('image')) cls = 'image';
    else if (mime.split(';')[0]!.trim().endsWith('pdf')) cls = 'pdf';
    else if (mime.startsWith('text')) cls = 'text';
    else cls = 'other';
    if (mimeClasses.size < 4096) mimeClasses.set(mime, cls);
  }
  return cls;
}

/** Contract 3.1 step 4, without the textImmutable refinement. */
export function classify(mime: string, size: number, sample: Buffer): Exclude<FileType, '' | 'invalid_link'> {
  const cls = mimeClass(mime);
  if (cls === 'video' || cls === 'audio' || cls === 'image' || cls === 'pdf') return cls;
  if ((cls === 'text' || !isBinary(sample)) && size <= TEXT_LIMIT) return 'text';
  return 'blob';
}

/** Whether reading the header could change the answer (it never does for media, pdf or text by extension). */
function sampleMatters(mime: string, size: number): boolean {
  if (!mime) return true;
  if (size > TEXT_LIMIT) return false;
  return mimeClass(mime) === 'other';
}

const EMPTY: Buffer = Buffer.alloc(0);

let sniffedEmpty: string | undefined;

/** `typeFromSample` of an empty file, without sniffing the empty sample again for every file. */
function emptyFileType(mime: string): Exclude<FileType, '' | 'invalid_link'> {
  sniffedEmpty ??= sniff(EMPTY);
  return classify(mime || sniffedEmpty, 0, EMPTY);
}

/** The type once the sample is known (or empty because it could not be read). */
function typeFromSample(mime: string, size: number, sample: Buffer): Exclude<FileType, '' | 'invalid_link'> {
  return classify(mime || sniff(sample), size, sample);
}

/**
 * The type of a regular file or special file (contract 3.1). With `readHeader` off the sample is
 * empty, and an empty sample counts as text: File Browser's quirk, kept for the wire.
 */
export async function detectType(
  name: string,
  st: { size: number | bigint; special: boolean },
  readHeader: boolean,
  sample: () => Promise<Buffer>,
): Promise<{ type: Exclude<FileType, '' | 'invalid_link'>; mime: string }> {
  if (st.special) return { type: 'blob', mime: '' };
  const size = Number(st.size);
  let mime = mimeByExtension(name);
  let bytes: Buffer = EMPTY;
  if (readHeader && sampleMatters(mime, size)) {
    bytes = await sample().catch(() => EMPTY);
    if (!mime) mime = sniff(bytes);
  }
  return { type: classify(mime, size, bytes), mime };
}

/** One buffer for synchronous sample reads: each is classified before anything else runs. */
const syncSample = Buffer.alloc(SAMPLE_SIZE);

/** `readEntrySample` without the thread pool, for the listing's fast path. */
function readEntrySampleSync(folder: Pinned, name: string): Buffer {
  const fd = openEntryFileSync(folder, name);
  try {
    return syncSample.subarray(0, fs.readSync(fd, syncSample, 0, SAMPLE_SIZE, 0));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Subtitle names: `.vtt`, `.srt`, `.ass`, `.ssa` in any letter case. The old server's pattern had
 * an unescaped dot (`foo_srt` matched); the subtitle endpoint uses the same test as discovery.
 */
const SUBTITLE_NAME = /\.(vtt|srt|ass|ssa)$/i;

/** The entries of the folder reached from `folder` by `names`, one at a time and no link followed; none when there is no such folder. */
async function readNested(folder: Pinned, names: readonly string[]): Promise<fs.Dirent[]> {
  const opened: Pinned[] = [];
  try {
    let here = folder;
    for (const name of names) {
      const next = await here.lookup(name);
      if (!next) return [];
      opened.push(next);
      if (!next.stat.isDirectory()) return [];
      here = next;
    }
    return await readFolderTypes(here);
  } catch {
    return [];
  } finally {
    for (const p of opened) await p.close();
  }
}

/** A place subtitles can come from, in the order of the folder's entries. */
type SubtitleSource =
  { kind: 'sibling'; name: string } | { kind: 'folder'; name: string; dirents: Promise<fs.Dirent[]> };

/**
 * Subtitle discovery for the videos of one folder (contract 3.3). The folder's entries are looked
 * through once and each `subs`/`subtitles` folder is read once, however many videos there are.
 * The folder is pinned by the caller for as long as the finder is used.
 */
export class SubtitleFinder {
  private readonly sources: SubtitleSource[] = [];
  private readonly deeper = new Map<string, Promise<fs.Dirent[]>>();
  /** The folder has `subs`/`subtitles` folders, whose contents matter. */
  readonly readsFolders: boolean;

  constructor(
    private readonly access: FileAccess,
    private readonly dir: Pinned,
    private readonly dirVirtual: string,
    siblings: readonly { name: string; isDir: boolean }[],
  ) {
    for (const entry of siblings) {
      if (!entry.isDir) {
        if (SUBTITLE_NAME.test(entry.name)) this.sources.push({ kind: 'sibling', name: entry.name });
        continue;
      }
      const lower = entry.name.toLowerCase();
      if (lower !== 'subs' && lower !== 'subtitles') continue;
      this.sources.push({ kind: 'folder', name: entry.name, dirents: readNested(dir, [entry.name]) });
    }
    this.readsFolders = this.sources.some((s) => s.kind === 'folder');
  }

  static async of(access: FileAccess, dir: Pinned, dirVirtual: string): Promise<SubtitleFinder> {
    const siblings = (await readNested(dir, [])).map((d) => ({ name: d.name, isDir: d.isDirectory() }));
    return new SubtitleFinder(access, dir, dirVirtual, siblings);
  }

  /**
   * Subtitles of a video: siblings starting with the video's base name, files in sibling
   * `subs`/`subtitles` folders and in their sub-folders starting with the base name. Unlike the
   * old server, paths failing the user's rules are left out.
   */
  async find(videoName: string): Promise<string[]> {
    const base = videoName.slice(0, videoName.length - extensionOf(videoName).length);
    const out: string[] = [];
    const add = (virtual: string) => {
      if (this.access.check(virtual)) out.push(virtual);
    };
    for (const source of this.sources) {
      if (source.kind === 'sibling') {
        if (source.name.startsWith(base)) add(joinVirtual(this.dirVirtual, source.name));
        continue;
      }
      const subsVirtual = joinVirtual(this.dirVirtual, source.name);
      for (const sub of await source.dirents) {
        if (!sub.isDirectory()) {
          if (SUBTITLE_NAME.test(sub.name)) add(joinVirtual(subsVirtual, sub.name));
        } else if (sub.name.startsWith(base)) {
          const key = `${source.name}/${sub.name}`;
          let inner = this.deeper.get(key);
          if (!inner) {
            inner = readNested(this.dir, [source.name, sub.name]);
            this.deeper.set(key, inner);
          }
          for (const deeper of await inner) {
            if (!deeper.isDirectory() && SUBTITLE_NAME.test(deeper.name)) {
              add(joinVirtual(joinVirtual(subsVirtual, sub.name), deeper.name));
            }
          }
        }
      }
    }
    return out;
  }
}

/** Subtitles of one video (see `SubtitleFinder.find`); `dir` is the pinned folder holding it. */
export async function findSubtitles(
  access: FileAccess,
  dir: Pinned,
  dirVirtual: string,
  videoName: string,
): Promise<string[]> {
  return (await SubtitleFinder.of(access, dir, dirVirtual)).find(videoName);
}

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

const defaultListingIo: ListingIo = {
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
function itemOf(virtualPrefix: string, row: Row): FileItem {
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
  access: FileAccess,
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
interface Computed {
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
function rowAt(listing: Computed, i: number): Row {
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
async function computeListing(
  access: FileAccess,
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
  access: FileAccess,
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
  access: FileAccess,
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
  access: FileAccess,
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
/** Listings with more items than this are streamed (see `ListingJson`); a power of two. */
export const STREAM_FROM = 16_384;
/** Items per streamed piece: about 100 KB of JSON. */
const PIECE_ITEMS = 512;

/**
 * A listing as JSON text (`"items":[…],"numDirs":N,"numFiles":M`, UTF-8), in pieces. `length` is
 * their total when it is known before sending: the listing was made whole (from the
 * `ListingCache` or small enough to render at once). Without it, the pieces are made one at a time
 * as they are read, with a turn of the event loop between two, so that a listing of 100,000 items
 * neither holds its 100,000 items and their 19 MB of text at once nor keeps other requests waiting
 * while it is rendered.
 */
export type ListingJson = { length: number; pieces: Iterable<Buffer> } | { pieces: AsyncIterable<Buffer> };

/** The JSON text of a computed listing, `PIECE_ITEMS` items a piece. */
function* listingText(listing: Computed): Generator<string> {
  const { order, virtualPrefix } = listing;
  // JSON.stringify of the array is '[' + its items' JSON joined with ',' + ']': the same bytes.
  let text = '"items":[';
  for (let i = 0; i < order.length; i++) {
    if (i > 0) text += ',';
    text += JSON.stringify(itemOf(virtualPrefix, rowAt(listing, order[i]!)));
    if (i % PIECE_ITEMS === PIECE_ITEMS - 1 && i < order.length - 1) {
      yield text;
      text = '';
    }
  }
  yield `${text}],"numDirs":${listing.numDirs},"numFiles":${listing.numFiles}`;
}

/**
 * `listDirectory` as JSON text, taken from the `ListingCache` when the folder is exactly as it was
 * when the text was made, streamed when it is big (see `ListingJson`).
 */
export async function listDirectoryJson(
  access: FileAccess,
  dir: Pinned,
  dirVirtual: string,
  opts: ListingOptions,
  deps: ListingIo = defaultListingIo,
): Promise<ListingJson> {
  const dev = opts.dev ?? dir.stat.dev;
  const snapshot = await deps.reader.read(dir, dev, access.owner);
  const key = JSON.stringify([
    dir.real,
    dirVirtual,
    opts.readHeader,
    opts.sorting.by,
    opts.sorting.asc,
    access.rules.fingerprint,
  ]);
  const cached = deps.rendered.get(key, snapshot);
  if (cached) {
    snapshot.release();
    return cached;
  }
  let listing: Computed;
  try {
    listing = await computeListing(access, dir, dirVirtual, opts, dev, snapshot, deps);
  } catch (err) {
    snapshot.release();
    throw err;
  }
  if (listing.order.length > (deps.streamFrom ?? STREAM_FROM)) {
    // The listing's numbers and names are the snapshot's: it is given back once the last piece is made.
    const keep = listing.cacheable ? { key, cache: deps.rendered } : undefined;
    return { pieces: streamText(listing, snapshot, keep) };
  }
  const json = Buffer.from([...listingText(listing)].join(''));
  if (listing.cacheable)
    deps.rendered.set(key, snapshot, { pieces: [json], packed: false, length: json.length });
  else snapshot.release();
  return { length: json.length, pieces: [json] };
}

/**
 * The pieces of a big listing made from `snapshot`, each made when the previous one has been
 * taken. With `keep`, the pieces sent are stored in the cache with the snapshot once the last has
 * gone, if the whole fits; a client that leaves earlier stores nothing. They are kept deflated
 * (see `ListingCache`), each on its own, as it is sent: the text of a big folder is never held
 * whole.
 */
async function* streamText(
  listing: Computed,
  snapshot: DirSnapshot,
  keep?: { key: string; cache: ListingCache },
): AsyncGenerator<Buffer> {
  let kept: Buffer[] | undefined = keep ? [] : undefined;
  let weight = keep ? snapshot.weight : 0;
  let length = 0;
  let complete = false;
  try {
    let first = true;
    for (const text of listingText(listing)) {
      if (!first) await loopTurn();
      first = false;
      const piece = Buffer.from(text);
      if (kept) {
        const packed = deflateRawSync(piece, { level: 1 });
        weight += packed.length;
        length += piece.length;
        if (keep!.cache.fits(weight)) kept.push(packed);
        else kept = undefined;
      }
      yield piece;
    }
    complete = true;
  } finally {
    if (keep && complete && kept) keep.cache.set(keep.key, snapshot, { pieces: kept, packed: true, length });
    else snapshot.release();
  }
}

export interface InfoOptions {
  /** The caller may read content (download permission). */
  content: boolean;
  /** The caller may modify: otherwise text files are `textImmutable`. */
  modify: boolean;
  readHeader: boolean;
  /** Sorting of a directory's items. */
  sorting: Sorting;
  /** Header reading for directory items (server typeDetectionByHeader). */
  listingReadHeader: boolean;
}

/** The fresh stats of an opened path and the FileInfo fields every answer has. */
async function infoBase(r: Opened): Promise<{ st: fs.BigIntStats; base: FileInfo }> {
  if (!r.node) throw notFound();
  const [linkStat, st] = await Promise.all([
    r.linkFolder ? statEntry(r.linkFolder, r.name) : r.node.statNs(),
    r.node.statNs(),
  ]).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ENOENT' ? notFound() : err;
  });
  const base: FileInfo = {
    path: r.virtual,
    name: r.name,
    size: Number(st.size),
    extension: extensionOf(r.name),
    modified: goTime(linkStat.mtimeNs),
    mode: goMode(linkStat.mode),
    isDir: st.isDirectory(),
    isSymlink: r.isSymlink,
    type: '',
  };
  return { st, base };
}

/**
 * The FileInfo of a directory as UTF-8 JSON text in pieces, keys in the order `fileInfo`'s
 * object has them, with the listing from `listDirectoryJson`; undefined when `r` is not a
 * directory. The resources route sends it as it is.
 */
export async function directoryInfoJson(
  access: FileAccess,
  r: Opened,
  opts: InfoOptions,
): Promise<DirectoryJson | undefined> {
  if (!r.stat || !r.linkStat || !r.node) throw notFound();
  const { st, base } = await infoBase(r);
  if (!base.isDir) return undefined;
  const listing = await listDirectoryJson(access, r.node, r.virtual, {
    readHeader: opts.listingReadHeader,
    sorting: opts.sorting,
    dev: st.dev,
  });
  const tail = Buffer.from(`,"sorting":${JSON.stringify(opts.sorting)},${JSON.stringify(base).slice(1)}`);
  // Pieces rather than one copy: the listing part is usually the cache's own buffer.
  if (!('length' in listing)) return { pieces: around(listing.pieces, tail) };
  const length = 1 + listing.length + tail.length;
  if (Array.isArray(listing.pieces)) return { length, pieces: [OPEN_BRACE, ...listing.pieces, tail] };
  return { length, pieces: aroundInTurns(listing.pieces, tail) };
}

/**
 * A directory's FileInfo as JSON text in pieces (see `directoryInfoJson`); `length` is their total
 * when it is known before sending.
 */
export type DirectoryJson = { length?: number; pieces: Iterable<Buffer> | AsyncIterable<Buffer> };

async function* around(pieces: AsyncIterable<Buffer>, tail: Buffer): AsyncGenerator<Buffer> {
  yield OPEN_BRACE;
  yield* pieces;
  yield tail;
}

/**
 * A kept big listing's pieces (inflated one by one as they are taken), with a turn of the event
 * loop between two: a client reading fast would take them all in one stretch, 19 MB for 100,000
 * items, with no other request answered meanwhile.
 */
async function* aroundInTurns(pieces: Iterable<Buffer>, tail: Buffer): AsyncGenerator<Buffer> {
  yield OPEN_BRACE;
  for (const piece of pieces) {
    yield piece;
    await loopTurn();
  }
  yield tail;
}

const OPEN_BRACE = Buffer.from('{');

/**
 * The FileInfo of an opened path (contract 2.4): for a top-level link, mode/modified/name are the
 * link's own and size/isDir the target's.
 */
export async function fileInfo(access: FileAccess, r: Opened, opts: InfoOptions): Promise<FileInfo> {
  if (!r.stat || !r.linkStat || !r.node) throw notFound();
  const node = r.node;
  const { st, base } = await infoBase(r);
  if (base.isDir) {
    const listing = await listDirectory(access, node, r.virtual, {
      readHeader: opts.listingReadHeader,
      sorting: opts.sorting,
      dev: st.dev,
    });
    return { ...listing, sorting: opts.sorting, ...base };
  }
  const special = isSpecial(r.stat);
  const { type } = await detectType(r.name, { size: st.size, special }, opts.readHeader, () =>
    readPinnedSample(node),
  );
  const info: FileInfo = { ...base, type };
  // Siblings of the link's own folder when the video is reached through a link.
  const folder = r.linkFolder ?? r.folder;
  if (type === 'video' && folder) {
    const parentVirtual = r.virtual.slice(0, r.virtual.lastIndexOf('/')) || '/';
    const subs = await findSubtitles(access, folder, parentVirtual, r.name);
    if (subs.length > 0) info.subtitles = subs;
  }
  if (type === 'text') {
    if (!opts.modify) info.type = 'textImmutable';
    if (opts.content && st.size <= BigInt(TEXT_CONTENT_LIMIT)) {
      const content = await readTextBounded(node, Number(st.size));
      if (content) info.content = content;
    }
  }
  return info;
}

/**
 * The first `size` bytes of a pinned text file as a string: `size` is the size the answer
 * reports, so a file growing meanwhile neither grows the answer nor the memory it takes. One
 * buffer of that size is read into and decoded once.
 */
export async function readTextBounded(node: Pinned, size: number): Promise<string> {
  const fh = await openPinnedFile(node);
  try {
    const buf = Buffer.allocUnsafe(size);
    let off = 0;
    while (off < buf.length) {
      const { bytesRead } = await fh.read(buf, off, buf.length - off, off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    await fh.close();
  }
}
