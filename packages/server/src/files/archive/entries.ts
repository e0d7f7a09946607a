import type fsp from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../context.js';
import { AppError, notFound } from '../../errors.js';
import type { FileAccess } from '../access/access.js';
import { adaptiveIo } from '../listing/adaptive-io.js';
import { openEntryFile, openPinnedFile, readEntryFileSync, type Pinned } from '../access/anchor.js';
import { canonicalise, isSpecial, type Resolved } from '../access/resolver.js';
import { walkTree } from '../access/tree.js';

/** One member of an archive: a name relative to the archive root and where its bytes come from. */
export interface ArchiveEntry {
  /** `/`-separated, relative, no `..`; folders without the trailing `/`. */
  name: string;
  isDir: boolean;
  size: number;
  mode: number;
  mtimeMs: number;
  /**
   * Opens a file's content. Only valid while the member is being written: it reads through the
   * folder the walk holds open for it, which is let go when the next member is asked for.
   */
  open(): Promise<fsp.FileHandle>;
  /**
   * Set for a small file on a device that answers fast: reads it whole into `into` without the
   * thread pool (returns the bytes read). Same validity as `open`.
   */
  readSmall?(into: Buffer): number;
  /** Hears of the bytes of the file read into the archive (a download's progress). */
  onRead?(bytes: number): Promise<void> | void;
}

const CHUNK = 256 * 1024;

/**
 * Files up to this size may be read synchronously. Through the thread pool a file costs an open,
 * an fstat, a read and a close, each a queue hop and a wake-up that cost more than the call on a
 * cached small file; one synchronous go takes a few microseconds and blocks nobody for long.
 */
export const SMALL_FILE = 64 * 1024;

/** `readEntryFileSync`, timed for the adaptive I/O: a device that turns slow goes back to the pool. */
function readSmallTimed(folder: Pinned, name: string, dev: number, into: Buffer): number {
  const start = performance.now();
  try {
    return readEntryFileSync(folder, name, into);
  } finally {
    adaptiveIo.observe(dev, folder.path, performance.now() - start, 1);
  }
}

/**
 * Reads exactly `entry.size` bytes of a member: a file that shrank meanwhile is padded with zeros,
 * one that grew is cut, so headers written before the content stay true.
 */
export async function* readExactly(entry: ArchiveEntry): AsyncGenerator<Buffer> {
  if (entry.readSmall && entry.size <= SMALL_FILE) {
    const buf = Buffer.allocUnsafe(entry.size);
    let got = 0;
    try {
      got = entry.readSmall(buf);
    } catch {
      // Vanished or replaced since it was listed: zeros keep the archive well-formed.
    }
    buf.fill(0, got);
    await entry.onRead?.(got);
    yield buf;
    return;
  }
  const fh = entry.isDir ? undefined : await entry.open().catch(() => undefined);
  if (!fh) {
    // Vanished since it was listed: keep the archive well-formed.
    for (let left = entry.size; left > 0; left -= CHUNK) yield Buffer.alloc(Math.min(CHUNK, left));
    return;
  }
  try {
    let pos = 0;
    while (pos < entry.size) {
      const want = Math.min(CHUNK, entry.size - pos);
      const buf = Buffer.allocUnsafe(want);
      const { bytesRead } = await fh.read(buf, 0, want, pos);
      if (bytesRead === 0) {
        yield Buffer.alloc(entry.size - pos);
        return;
      }
      pos += bytesRead;
      await entry.onRead?.(bytesRead);
      yield bytesRead === want ? buf : buf.subarray(0, bytesRead);
    }
  } finally {
    await fh.close();
  }
}

/** Member names: backslashes become `_`, and anything that could leave the archive root aborts. */
export function memberName(relative: string): string {
  const name = relative.replaceAll('\\', '_');
  const segments = name.split('/');
  if (name === '' || name.startsWith('/') || segments.some((s) => s === '..' || s === '.' || s === '')) {
    throw new AppError('internal', `archive member name would escape the archive: ${relative}`);
  }
  return name;
}

export interface ArchivePlan {
  /** File name of the archive without extension (contract 6.1). */
  baseName: string;
  entries: AsyncIterable<ArchiveEntry>;
}

/** Segment-wise common prefix of virtual paths. */
function commonPrefix(paths: string[]): string {
  const split = paths.map((p) => p.split('/').filter(Boolean));
  const first = split[0] ?? [];
  let n = first.length;
  for (const segs of split.slice(1)) {
    let i = 0;
    while (i < n && i < segs.length && segs[i] === first[i]) i++;
    n = i;
  }
  return '/' + first.slice(0, n).join('/');
}

/**
 * Parses `files=` (contract 6.1): comma-separated paths relative to `{path}`; `+` stays a plus
 * (clients double-encode), each item percent-decoded and canonicalised.
 */
export function parseFilesParam(base: string, files: string | undefined): string[] {
  if (files === undefined || files === '') return [canonicalise(base).virtual];
  const out: string[] = [];
  for (const item of files.split(',')) {
    if (item === '') continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(item.replaceAll('+', '%2B'));
    } catch {
      decoded = item;
    }
    out.push(canonicalise(base + '/' + decoded).virtual);
  }
  return out;
}

/**
 * What a folder or `files=` download contains: every requested path that passes the rules, and
 * for folders every descendant that does (a denied folder is pruned); escaping links, special
 * files and unreadable entries are skipped and logged. Nothing is read before it is streamed.
 */
export async function planArchive(
  access: FileAccess,
  requested: string[],
  log: Logger,
): Promise<ArchivePlan> {
  const resolved: Resolved[] = [];
  for (const p of requested) {
    try {
      resolved.push(await access.resolve(p));
    } catch (err) {
      if (requested.length === 1) throw err;
      log.warn({ path: p }, 'archive: skipped a path the user may not read');
    }
  }
  if (requested.length === 1 && !resolved[0]?.stat) throw notFound();
  let common = commonPrefix(resolved.map((r) => r.virtual));
  const same = resolved.find((r) => r.virtual === common);
  if (same && !same.stat?.isDirectory()) common = path.posix.dirname(common);
  const baseName =
    (requested.length > 1 ? '_' : '') +
    (common === '/' ? path.basename(access.scope.real) : path.posix.basename(common));

  const relative = (virtual: string) =>
    memberName(common === '/' ? virtual.slice(1) : virtual.slice(common.length + 1));
  async function* entries(): AsyncGenerator<ArchiveEntry> {
    for (const r of resolved) {
      if (!r.stat) continue;
      // Opened again for the reading, which happens while the client takes the archive.
      const o = await access.open(r.virtual).catch(() => undefined);
      if (!o) {
        log.warn({ path: r.virtual }, 'archive: skipped a path that changed since the request');
        continue;
      }
      try {
        if (!o.stat || !o.node) continue;
        const node = o.node;
        if (r.virtual !== common && (o.stat.isDirectory() || o.stat.isFile())) {
          yield {
            name: relative(r.virtual),
            isDir: o.stat.isDirectory(),
            size: o.stat.isFile() ? o.stat.size : 0,
            mode: o.stat.mode,
            mtimeMs: o.stat.mtimeMs,
            open: () => openPinnedFile(node),
          };
        }
        if (!o.stat.isDirectory()) continue;
        const walk = walkTree(access, node, r.virtual, {
          follow: true,
          include: (e) => access.checkResolved(e),
        });
        for await (const e of walk) {
          if (isSpecial(e.stat)) continue;
          const { folder, name } = e;
          const dev = e.stat.dev;
          const small =
            e.stat.isFile() && e.stat.size <= SMALL_FILE && (await adaptiveIo.isFast(dev, folder.path));
          yield {
            name: relative(e.virtual),
            isDir: e.stat.isDirectory(),
            size: e.stat.isFile() ? e.stat.size : 0,
            mode: e.stat.mode,
            mtimeMs: e.stat.mtimeMs,
            open: () => openEntryFile(folder, name),
            ...(small ? { readSmall: (into: Buffer) => readSmallTimed(folder, name, dev, into) } : {}),
          };
        }
      } finally {
        await o.close();
      }
    }
  }
  return { baseName, entries: entries() };
}
