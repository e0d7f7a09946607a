import type fs from 'node:fs';
import fsp from 'node:fs/promises';
import { constants as C } from 'node:fs';
import type { FileInfo, FileItem, FileType, Sorting } from '@filebrowser/contract';
import { forbidden, notFound } from '../errors.js';
import type { FileAccess } from './access.js';
import { extensionOf, isBinary, mimeByExtension, sniff } from './mime.js';
import { isSpecial, joinVirtual, type Resolved } from './resolver.js';
import { sortListing } from './sort.js';

/** Text content and the `text` type stop at 10 MiB (contract 3.1). */
export const TEXT_LIMIT = 10 * 1024 * 1024;
const SAMPLE_SIZE = 512;
/** Concurrent lstat/sample reads per listing: enough to fill the thread pool, bounded for huge folders. */
const LISTING_CONCURRENCY = 32;

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

/** Go's RFC 3339 with nanoseconds (trailing zeros trimmed) in the server's local offset, "Z" for UTC. */
export function goTime(ns: bigint): string {
  const secs = ns / 1_000_000_000n - (ns < 0n && ns % 1_000_000_000n !== 0n ? 1n : 0n);
  const frac = ns - secs * 1_000_000_000n;
  const d = new Date(Number(secs) * 1000);
  const offset = -d.getTimezoneOffset();
  let out = `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (frac > 0n) out += '.' + frac.toString().padStart(9, '0').replace(/0+$/, '');
  if (offset === 0) return out + 'Z';
  const abs = Math.abs(offset);
  return `${out}${offset > 0 ? '+' : '-'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The ETag File Browser sends after a write: hex of the mtime in ns, then hex of the size. */
export function etagOf(st: fs.BigIntStats): string {
  return `"${st.mtimeNs.toString(16)}${st.size.toString(16)}"`;
}

/** Reads up to 512 bytes without following a swapped-in link or blocking on a swapped-in FIFO. */
export async function readSample(realPath: string): Promise<Buffer> {
  const fh = await fsp.open(realPath, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  try {
    if (!(await fh.stat()).isFile()) return Buffer.alloc(0);
    const buf = Buffer.alloc(SAMPLE_SIZE);
    const { bytesRead } = await fh.read(buf, 0, SAMPLE_SIZE, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Contract 3.1 step 4, without the textImmutable refinement. */
export function classify(mime: string, size: number, sample: Buffer): Exclude<FileType, '' | 'invalid_link'> {
  if (mime.startsWith('video')) return 'video';
  if (mime.startsWith('audio')) return 'audio';
  if (mime.startsWith('image')) return 'image';
  if (mime.split(';')[0]!.trim().endsWith('pdf')) return 'pdf';
  if ((mime.startsWith('text') || !isBinary(sample)) && size <= TEXT_LIMIT) return 'text';
  return 'blob';
}

/** Whether reading the header could change the answer (it never does for media, pdf or text by extension). */
function sampleMatters(mime: string, size: number): boolean {
  if (!mime) return true;
  if (/^(video|audio|image)/.test(mime) || mime.split(';')[0]!.trim().endsWith('pdf')) return false;
  if (size > TEXT_LIMIT) return false;
  return !mime.startsWith('text');
}

/**
 * The type of a regular file or special file (contract 3.1). With `readHeader` off the sample is
 * empty, and an empty sample counts as text: File Browser's quirk, kept for the wire.
 */
export async function detectType(
  name: string,
  realPath: string,
  st: { size: number | bigint; special: boolean },
  readHeader: boolean,
): Promise<{ type: Exclude<FileType, '' | 'invalid_link'>; mime: string }> {
  if (st.special) return { type: 'blob', mime: '' };
  const size = Number(st.size);
  let mime = mimeByExtension(name);
  let sample: Buffer = Buffer.alloc(0);
  if (readHeader && sampleMatters(mime, size)) {
    sample = await readSample(realPath).catch(() => Buffer.alloc(0));
    if (!mime) mime = sniff(sample);
  }
  return { type: classify(mime, size, sample), mime };
}

/**
 * Subtitle names: `.vtt`, `.srt`, `.ass`, `.ssa` in any letter case. The old server's pattern had
 * an unescaped dot (`foo_srt` matched); the subtitle endpoint uses the same test as discovery.
 */
const SUBTITLE_NAME = /\.(vtt|srt|ass|ssa)$/i;

async function readdirSafe(real: string): Promise<fs.Dirent[]> {
  return fsp.readdir(real, { withFileTypes: true }).catch(() => []);
}

/**
 * Subtitles of a video (contract 3.3): siblings starting with the video's base name, files in
 * sibling `subs`/`subtitles` folders and in their sub-folders starting with the base name.
 * Unlike the old server, paths failing the user's rules are left out.
 */
export async function findSubtitles(
  access: FileAccess,
  dirReal: string,
  dirVirtual: string,
  videoName: string,
  siblings?: fs.Dirent[],
): Promise<string[]> {
  const base = videoName.slice(0, videoName.length - extensionOf(videoName).length);
  const out: string[] = [];
  const add = (virtual: string) => {
    if (access.check(virtual)) out.push(virtual);
  };
  for (const entry of siblings ?? (await readdirSafe(dirReal))) {
    if (!entry.isDirectory()) {
      if (entry.name.startsWith(base) && SUBTITLE_NAME.test(entry.name))
        add(joinVirtual(dirVirtual, entry.name));
      continue;
    }
    const lower = entry.name.toLowerCase();
    if (lower !== 'subs' && lower !== 'subtitles') continue;
    const subsReal = `${dirReal}/${entry.name}`;
    const subsVirtual = joinVirtual(dirVirtual, entry.name);
    for (const sub of await readdirSafe(subsReal)) {
      if (!sub.isDirectory()) {
        if (SUBTITLE_NAME.test(sub.name)) add(joinVirtual(subsVirtual, sub.name));
      } else if (sub.name.startsWith(base)) {
        for (const deeper of await readdirSafe(`${subsReal}/${sub.name}`)) {
          if (!deeper.isDirectory() && SUBTITLE_NAME.test(deeper.name)) {
            add(joinVirtual(joinVirtual(subsVirtual, sub.name), deeper.name));
          }
        }
      }
    }
  }
  return out;
}

/** An item with what sorting needs beside the wire fields. */
interface ListedItem extends FileItem {
  mtimeNs: bigint;
}

/** Runs `fn` over `inputs` with at most `limit` in flight, keeping the input order. */
export async function mapLimit<T, R>(
  inputs: readonly T[],
  limit: number,
  fn: (t: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(inputs.length);
  let next = 0;
  const worker = async () => {
    while (next < inputs.length) {
      const i = next++;
      out[i] = await fn(inputs[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, inputs.length) }, worker));
  return out;
}

export interface ListingOptions {
  /** Read 512-byte headers of entries whose type depends on them (server `typeDetectionByHeader`). */
  readHeader: boolean;
  sorting: Sorting;
}

async function listItem(
  access: FileAccess,
  dirReal: string,
  dirVirtual: string,
  dirent: fs.Dirent,
  readHeader: boolean,
): Promise<ListedItem | undefined> {
  const name = dirent.name;
  const virtual = joinVirtual(dirVirtual, name);
  if (!access.check(virtual)) return undefined;
  const entry = dirReal === '/' ? '/' + name : `${dirReal}/${name}`;
  let linkStat: fs.BigIntStats;
  try {
    linkStat = await fsp.lstat(entry, { bigint: true });
  } catch {
    return undefined; // vanished or unreadable: skipped, as File Browser's fallback listing does
  }
  let st = linkStat;
  let real = entry;
  const isSymlink = linkStat.isSymbolicLink();
  if (isSymlink) {
    let child;
    try {
      child = await access.scope.resolveChild(dirReal, name);
    } catch {
      return undefined; // escaping (or looping) links are hidden from listings
    }
    if (!child.stat) {
      return {
        path: virtual,
        name,
        size: Number(linkStat.size),
        extension: extensionOf(name),
        modified: goTime(linkStat.mtimeNs),
        mode: goMode(linkStat.mode),
        isDir: false,
        isSymlink: true,
        type: 'invalid_link',
        mtimeNs: linkStat.mtimeNs,
      };
    }
    if (!access.checkResolved({ virtual, real: child.real })) return undefined;
    real = child.real;
    try {
      st = await fsp.lstat(real, { bigint: true });
    } catch {
      return undefined;
    }
  }
  const isDir = st.isDirectory();
  let type: FileType = '';
  if (!isDir) {
    type = (await detectType(name, real, { size: st.size, special: isSpecialBig(st) }, readHeader)).type;
  }
  return {
    path: virtual,
    name,
    size: Number(st.size),
    extension: extensionOf(name),
    modified: goTime(st.mtimeNs),
    mode: goMode(st.mode),
    isDir,
    isSymlink,
    type,
    mtimeNs: st.mtimeNs,
  };
}

function isSpecialBig(st: fs.BigIntStats): boolean {
  return st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice();
}

/** A directory's visible entries (rules, hidden dotfiles and escaping links filtered out), sorted. */
export async function listDirectory(
  access: FileAccess,
  dirReal: string,
  dirVirtual: string,
  opts: ListingOptions,
): Promise<{ items: FileItem[]; numDirs: number; numFiles: number }> {
  const dirents = await fsp.readdir(dirReal, { withFileTypes: true });
  const listed = await mapLimit(dirents, LISTING_CONCURRENCY, (d) =>
    listItem(access, dirReal, dirVirtual, d, opts.readHeader),
  );
  const items = listed.filter((i): i is ListedItem => i !== undefined);
  let numDirs = 0;
  for (const item of items) if (item.isDir) numDirs++;
  const videos = items.filter((i) => i.type === 'video');
  if (videos.length > 0) {
    for (const v of videos) {
      const subs = await findSubtitles(access, dirReal, dirVirtual, v.name, dirents);
      if (subs.length > 0) v.subtitles = subs;
    }
  }
  sortListing(items, opts.sorting);
  return {
    items: items.map(({ mtimeNs: _drop, ...wire }) => wire),
    numDirs,
    numFiles: items.length - numDirs,
  };
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

/**
 * The FileInfo of a resolved path (contract 2.4): for a top-level link, mode/modified/name are the
 * link's own and size/isDir the target's.
 */
export async function fileInfo(access: FileAccess, r: Resolved, opts: InfoOptions): Promise<FileInfo> {
  if (!r.stat || !r.linkStat) throw notFound();
  const [linkStat, st] = await Promise.all([
    fsp.lstat(r.entry, { bigint: true }),
    fsp.lstat(r.real, { bigint: true }),
  ]).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ENOENT' ? notFound() : err;
  });
  const isDir = st.isDirectory();
  const base: FileInfo = {
    path: r.virtual,
    name: r.name,
    size: Number(st.size),
    extension: extensionOf(r.name),
    modified: goTime(linkStat.mtimeNs),
    mode: goMode(linkStat.mode),
    isDir,
    isSymlink: r.isSymlink,
    type: '',
  };
  if (isDir) {
    const listing = await listDirectory(access, r.real, r.virtual, {
      readHeader: opts.listingReadHeader,
      sorting: opts.sorting,
    });
    return { ...listing, sorting: opts.sorting, ...base };
  }
  const special = isSpecial(r.stat);
  const { type } = await detectType(r.name, r.real, { size: st.size, special }, opts.readHeader);
  const info: FileInfo = { ...base, type };
  if (type === 'video') {
    const parentVirtual = r.virtual.slice(0, r.virtual.lastIndexOf('/')) || '/';
    const parentReal = r.real.slice(0, r.real.lastIndexOf('/')) || '/';
    // Siblings of the link's own folder when the video is reached through a link.
    const subs = await findSubtitles(
      access,
      r.isSymlink ? r.entry.slice(0, r.entry.lastIndexOf('/')) || '/' : parentReal,
      parentVirtual,
      r.name,
    );
    if (subs.length > 0) info.subtitles = subs;
  }
  if (type === 'text') {
    if (!opts.modify) info.type = 'textImmutable';
    if (opts.content && st.size <= BigInt(TEXT_LIMIT)) {
      const content = await readTextBounded(r.real, TEXT_LIMIT);
      if (content) info.content = content;
    }
  }
  return info;
}

/** Reads a whole text file of at most `limit` bytes (the file may have grown since stat). */
export async function readTextBounded(realPath: string, limit: number): Promise<string> {
  const fh = await fsp.open(realPath, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw forbidden();
    const buf = Buffer.alloc(Math.min(st.size, limit));
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
