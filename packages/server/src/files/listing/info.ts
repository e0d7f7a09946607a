import type fs from 'node:fs';
import { TEXT_CONTENT_LIMIT, type FileInfo, type Sorting } from '@filebrowser/contract';
import { notFound } from '../../errors.js';
import type { AccessView } from '../access/access-view.js';
import { openPinnedFile, statEntry, type Pinned } from '../access/anchor.js';
import { loopTurn } from '../../heavy-work.js';
import { extensionOf } from './mime.js';
import { isSpecial, type Opened } from '../access/resolver.js';
import { detectType, readPinnedSample } from './file-type.js';
import { listDirectory } from './folder-listing.js';
import { goMode, goTime } from './go-format.js';
import { listDirectoryJson } from './listing-json.js';
import { findSubtitles } from './subtitles.js';

/** The FileInfo of one opened path (contract 2.4): a file's facts and content, or a folder with its listing. */

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
  access: AccessView,
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
export async function fileInfo(access: AccessView, r: Opened, opts: InfoOptions): Promise<FileInfo> {
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
