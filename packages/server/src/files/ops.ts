import crypto from 'node:crypto';
import type fs from 'node:fs';
import { constants as C } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ChecksumAlgorithm, RecursiveEntry, Usage } from '@filebrowser/contract';
import { AppError, badRequest, conflict, forbidden, notFound } from '../errors.js';
import type { FileAccess } from './access.js';
import { extensionOf } from './mime.js';
import { goTime } from './info.js';
import { isInside, isSpecial, joinVirtual, openRegularFile, type Resolved } from './resolver.js';

/** A staging name beside the target: same folder (so rename is atomic), hidden, unguessable. */
export function stagingPath(target: string): string {
  const dir = path.dirname(target);
  return path.join(
    dir,
    `.${path.basename(target).slice(0, 100)}.fb-${crypto.randomBytes(6).toString('hex')}.tmp`,
  );
}

async function writeAll(fh: fsp.FileHandle, chunk: Buffer): Promise<void> {
  let off = 0;
  while (off < chunk.length) off += (await fh.write(chunk, off, chunk.length - off)).bytesWritten;
}

/** Copies one open file to another with a reused buffer (FileHandle streams can hold the handle open). */
async function copyHandle(input: fsp.FileHandle, output: fsp.FileHandle): Promise<void> {
  const buf = Buffer.allocUnsafe(1024 * 1024);
  for (;;) {
    const { bytesRead } = await input.read(buf, 0, buf.length, null);
    if (bytesRead === 0) return;
    await writeAll(output, buf.subarray(0, bytesRead));
  }
}

/** Creates the missing folders of a resolved path (mode dirMode), checking nothing escaped meanwhile. */
async function ensureParent(access: FileAccess, real: string, dirMode: number): Promise<void> {
  const parent = path.dirname(real);
  await fsp.mkdir(parent, { recursive: true, mode: dirMode });
  if (!access.scope.allows(await fsp.realpath(parent))) throw forbidden();
}

/**
 * Writes a request body to a file atomically (architecture, security model 9): into a staging
 * file in the target folder, fsync, then rename over the target. A failure removes only the
 * staging file; an existing file stays intact and readable until the rename.
 */
export async function writeFileAtomic(
  access: FileAccess,
  r: Resolved,
  body: Readable,
  opts: { fileMode: number; dirMode: number },
): Promise<fs.BigIntStats> {
  if (r.stat?.isDirectory()) throw conflict('a folder exists at this path');
  if (r.stat && !r.stat.isFile()) throw forbidden();
  await ensureParent(access, r.real, opts.dirMode);
  const staging = stagingPath(r.real);
  // Keep the mode of a file being replaced, as truncating it in place did.
  const mode = r.stat ? r.stat.mode & 0o7777 : opts.fileMode;
  const fh = await fsp.open(staging, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
  let renamed = false;
  try {
    for await (const chunk of body) await writeAll(fh, chunk as Buffer);
    await fh.chmod(mode);
    await fh.sync();
    await fh.close();
    await fsp.rename(staging, r.real);
    renamed = true;
  } finally {
    if (!renamed) {
      await fh.close().catch(() => undefined);
      await fsp.unlink(staging).catch(() => undefined);
    }
  }
  return fsp.stat(r.real, { bigint: true });
}

/** POST on a folder path: mkdir -p (an existing folder is fine, an existing file is a conflict). */
export async function makeDirectory(access: FileAccess, r: Resolved, dirMode: number): Promise<void> {
  if (r.stat) {
    if (r.stat.isDirectory()) return;
    throw conflict('a file exists at this path');
  }
  await ensureParent(access, r.real, dirMode);
  try {
    await fsp.mkdir(r.real, { mode: dirMode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (!(await fsp.stat(r.real)).isDirectory()) throw conflict('a file exists at this path');
  }
}

export interface TreeEntry {
  virtual: string;
  real: string;
  stat: fs.Stats;
}

/**
 * Walks a tree below a real folder without following links (what delete and move act on),
 * yielding every descendant.
 */
async function* walkNoFollow(real: string, virtual: string): AsyncGenerator<TreeEntry> {
  let dirents: fs.Dirent[];
  try {
    dirents = await fsp.readdir(real, { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of dirents) {
    const childReal = `${real}/${d.name}`;
    const childVirtual = joinVirtual(virtual, d.name);
    let st: fs.Stats;
    try {
      st = await fsp.lstat(childReal);
    } catch {
      continue;
    }
    yield { virtual: childVirtual, real: childReal, stat: st };
    if (st.isDirectory()) yield* walkNoFollow(childReal, childVirtual);
  }
}

/** Every descendant (and its mirror under `mirror`, when given) must pass the rules (contract 1.7). */
async function checkDescendants(
  access: FileAccess,
  src: Resolved,
  follow: boolean,
  mirror?: string,
): Promise<void> {
  if (!access.rules.hasRules || !src.stat?.isDirectory()) return;
  for await (const e of walkTree(access, src.real, src.virtual, { follow })) {
    if (!access.rulesAllowResolved(e.virtual, e.real)) throw forbidden();
    if (mirror && !access.rules.allowedByRules(mirror + e.virtual.slice(src.virtual.length)))
      throw forbidden();
  }
}

/** DELETE: the link itself when the path is a link; the whole tree otherwise (descendants checked). */
export async function deletePath(access: FileAccess, r: Resolved): Promise<void> {
  if (r.virtual === '/') throw forbidden();
  if (!r.linkStat) throw notFound();
  await checkDescendants(access, r, false);
  await fsp.rm(r.entry, { recursive: true, force: false });
}

/**
 * Walks a tree for copy, archives and search: with `follow`, in-scope links are followed (each
 * confined by the resolver; escaping or dangling ones skipped) and cycles are cut.
 */
export async function* walkTree(
  access: FileAccess,
  real: string,
  virtual: string,
  opts: { follow: boolean; signal?: AbortSignal; include?: (e: TreeEntry) => boolean },
  seen: Set<string> = new Set(),
): AsyncGenerator<TreeEntry> {
  if (!opts.follow) {
    yield* walkNoFollow(real, virtual);
    return;
  }
  const here = await fsp.stat(real).catch(() => undefined);
  if (!here) return;
  const key = `${here.dev}:${here.ino}`;
  if (seen.has(key)) return;
  seen.add(key);
  let dirents: fs.Dirent[];
  try {
    dirents = await fsp.readdir(real, { withFileTypes: true });
  } catch {
    seen.delete(key);
    return;
  }
  for (const d of dirents) {
    if (opts.signal?.aborted) break;
    const childVirtual = joinVirtual(virtual, d.name);
    let child;
    try {
      child = await access.scope.resolveChild(real, d.name);
    } catch {
      continue; // escaping or unreadable
    }
    if (!child.stat) continue; // dangling
    const entry = { virtual: childVirtual, real: child.real, stat: child.stat };
    if (opts.include && !opts.include(entry)) continue; // a refused folder is pruned with its contents
    yield entry;
    if (child.stat.isDirectory()) yield* walkTree(access, child.real, childVirtual, opts, seen);
  }
  seen.delete(key);
}

/** `a.txt` → `a(1).txt`, `a.tar.gz` → `a.tar(1).gz`, `.env` → `(1).env`, `dir` → `dir(1)`. */
export function numberedName(name: string, n: number): string {
  const ext = extensionOf(name);
  return `${name.slice(0, name.length - ext.length)}(${n})${ext}`;
}

/** The first free `name(N)` beside a resolved destination (rename=true). */
export async function freeDestination(access: FileAccess, dst: Resolved): Promise<Resolved> {
  const parent = dst.virtual.slice(0, dst.virtual.lastIndexOf('/')) || '/';
  for (let n = 1; n < 100_000; n++) {
    const candidate = await access.resolve(joinVirtual(parent, numberedName(dst.name, n)));
    if (!candidate.linkStat) return candidate;
  }
  throw conflict();
}

async function copyFile(src: string, dst: string, mode: number, dirMode: number): Promise<void> {
  await fsp.mkdir(path.dirname(dst), { recursive: true, mode: dirMode });
  const staging = stagingPath(dst);
  const input = await openRegularFile(src);
  try {
    const out = await fsp.open(staging, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode & 0o7777);
    try {
      await copyHandle(input, out);
      await out.chmod(mode & 0o7777);
      await out.sync();
    } finally {
      await out.close();
    }
    await fsp.rename(staging, dst);
  } catch (err) {
    await fsp.unlink(staging).catch(() => undefined);
    throw err;
  } finally {
    await input.close();
  }
}

/**
 * Copies a file or merges a folder tree (links dereferenced within the scope, escaping ones
 * skipped, special files skipped). Folders get the source folder's mode.
 */
export async function copyPath(
  access: FileAccess,
  src: Resolved,
  dst: Resolved,
  dirMode: number,
): Promise<void> {
  if (!src.stat) throw notFound();
  if (src.stat.isDirectory()) {
    await fsp.mkdir(dst.real, { recursive: true, mode: src.stat.mode & 0o7777 });
    for await (const e of walkTree(access, src.real, src.virtual, { follow: true })) {
      const target = dst.real + e.virtual.slice(src.virtual.length);
      if (!access.scope.allows(target)) throw forbidden();
      if (e.stat.isDirectory()) await fsp.mkdir(target, { recursive: true, mode: e.stat.mode & 0o7777 });
      else if (e.stat.isFile()) await copyFile(e.real, target, e.stat.mode, dirMode);
    }
    return;
  }
  if (isSpecial(src.stat)) throw forbidden();
  await copyFile(src.real, dst.real, src.stat.mode, dirMode);
}

/** Move/rename: the entry itself (a link stays a link); across file systems, copy then delete. */
export async function movePath(
  access: FileAccess,
  src: Resolved,
  dst: Resolved,
  dirMode: number,
): Promise<void> {
  await ensureParent(access, dst.real, dirMode);
  try {
    await fsp.rename(src.entry, dst.entry);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    const followed = await access.resolve(src.virtual);
    await copyPath(access, followed, dst, dirMode);
    await fsp.rm(src.entry, { recursive: true });
  }
}

export interface PatchRequest {
  action: string;
  override: boolean;
  rename: boolean;
}

/**
 * PATCH /api/resources (contract 5.6) after the route resolved both paths: order of checks,
 * source-is-parent, conflicts, auto-naming, permissions and descendant rules.
 */
export async function copyOrMove(
  access: FileAccess,
  src: Resolved,
  target: Resolved,
  req: PatchRequest,
  dirMode: number,
): Promise<Resolved> {
  const isRename = req.action === 'rename';
  let dst = target;
  if (src.virtual === '/' || dst.virtual === '/') throw forbidden();
  if (!src.linkStat) throw notFound();
  const srcReal = isRename ? src.entry : src.real;
  if (
    (dst.virtual !== src.virtual && dst.virtual.startsWith(src.virtual + '/')) ||
    (dst.real !== srcReal && isInside(srcReal, dst.real) && src.stat?.isDirectory())
  ) {
    throw badRequest('source is parent');
  }
  const sameFile =
    isRename &&
    !!dst.linkStat &&
    src.linkStat.ino === dst.linkStat.ino &&
    src.linkStat.dev === dst.linkStat.dev &&
    path.dirname(src.entry) === path.dirname(dst.entry);
  if (!sameFile) {
    if (!req.override && !req.rename && dst.linkStat) throw conflict();
    if (req.rename && dst.linkStat) dst = await freeDestination(access, dst);
    if (req.override && !access.perm.modify) throw forbidden();
  }
  await checkDescendants(access, src, !isRename, dst.virtual);
  switch (req.action) {
    case 'copy':
      if (!access.perm.create) throw forbidden();
      if (dst.real === src.real) throw new AppError('internal', 'cannot copy a file onto itself');
      if (req.override && dst.stat?.isDirectory() && !src.stat?.isDirectory())
        throw conflict('a folder exists at the destination');
      await copyPath(access, src, dst, dirMode);
      return dst;
    case 'rename':
      if (!access.perm.rename) throw forbidden();
      await movePath(access, src, dst, dirMode);
      return dst;
    default:
      throw badRequest(`unsupported action ${req.action}: invalid request params`);
  }
}

/** Streams a file through a hash (contract 5.1 step 4). */
export async function checksum(r: Resolved, algorithm: ChecksumAlgorithm): Promise<string> {
  const fh = await openRegularFile(r.real);
  const hash = crypto.createHash(algorithm);
  await pipeline(fh.createReadStream(), hash);
  return hash.digest('hex');
}

/** statfs of a folder; a file answers zeros (contract 5.8). */
export async function usage(r: Resolved): Promise<Usage> {
  if (!r.stat) throw notFound();
  if (!r.stat.isDirectory()) return { total: 0, used: 0 };
  const s = await fsp.statfs(r.real);
  return { total: s.blocks * s.bsize, used: (s.blocks - s.bfree) * s.bsize };
}

/**
 * GET /api/resources/recursive (contract 5.7): every visible entry below a folder, links not
 * followed, folders failing the rules pruned, stopping when `signal` aborts.
 */
export async function* recursiveEntries(
  access: FileAccess,
  r: Resolved,
  signal?: AbortSignal,
): AsyncGenerator<RecursiveEntry> {
  if (!r.stat) throw notFound();
  if (!r.stat.isDirectory()) throw badRequest('path is not a directory');
  yield* recurse(access, r.real, r.virtual, signal);
}

async function* recurse(
  access: FileAccess,
  real: string,
  virtual: string,
  signal?: AbortSignal,
): AsyncGenerator<RecursiveEntry> {
  let dirents: fs.Dirent[];
  try {
    dirents = await fsp.readdir(real, { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of dirents) {
    if (signal?.aborted) return;
    const childVirtual = joinVirtual(virtual, d.name);
    if (!access.check(childVirtual)) continue;
    const childReal = `${real}/${d.name}`;
    let st: fs.BigIntStats;
    try {
      st = await fsp.lstat(childReal, { bigint: true });
    } catch {
      continue;
    }
    const isDir = st.isDirectory();
    yield { path: childVirtual, name: d.name, size: Number(st.size), modified: goTime(st.mtimeNs), isDir };
    if (isDir) yield* recurse(access, childReal, childVirtual, signal);
  }
}
