import crypto from 'node:crypto';
import type fs from 'node:fs';
import type fsp from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ChecksumAlgorithm, Usage } from '@filebrowser/contract';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../errors.js';
import type { FileAccess } from '../access/access.js';
import {
  closeAll,
  createEntryFile,
  isSpecial,
  joinReal,
  makeEntryFolder,
  makeEntryLink,
  openEntryFile,
  openPinnedFile,
  readEntryLink,
  removeEntryFolder,
  renameEntry,
  statEntry,
  statFileSystem,
  unlinkEntry,
  type Pinned,
} from '../access/anchor.js';
import { extensionOf } from '../listing/mime.js';
import { bytesOf } from './quota.js';
import { replaceCounted, type Replacement, type ReplaceMode, type ReplaceStep } from './replace.js';
import { isInside, joinVirtual, type Opened } from '../access/resolver.js';
import { stagingName } from '../access/staging-names.js';
import type { StagingLedger } from './staging.js';
import { removeTree, walkTree } from '../access/tree.js';
import { writeBody } from './write-body.js';

export { recursiveEntries } from '../access/tree.js';

async function writeAll(fh: fsp.FileHandle, chunk: Buffer): Promise<void> {
  let off = 0;
  while (off < chunk.length) off += (await fh.write(chunk, off, chunk.length - off)).bytesWritten;
}

/** Bytes written between two background flushes of a large upload. */
const FLUSH_EVERY = 64 * 1024 * 1024;

/**
 * How a long copy is followed and stopped (jobs): `done` hears of bytes and entries as they are
 * copied; an aborted `signal` stops the copy between two reads, and the copy then removes what it
 * made, as on any failure.
 */
export interface Progress {
  signal?: AbortSignal;
  done?(bytes: number, items: number): void;
}

/** Copies one open file to another with a reused buffer (FileHandle streams can hold the handle open). */
async function copyHandle(input: fsp.FileHandle, output: fsp.FileHandle, progress: Progress): Promise<void> {
  const buf = Buffer.allocUnsafe(1024 * 1024);
  for (;;) {
    progress.signal?.throwIfAborted();
    const { bytesRead } = await input.read(buf, 0, buf.length, null);
    if (bytesRead === 0) return;
    await writeAll(output, buf.subarray(0, bytesRead));
    progress.done?.(bytesRead, 0);
  }
}

/** Where an entry goes: its pinned folder, its name, and the folders made on the way (released after). */
export interface Place {
  folder: Pinned;
  name: string;
  release(): Promise<void>;
  /** Removes the folders made on the way (when what was to go in them failed) and releases. */
  undo(): Promise<void>;
}

/** A folder made on the way to a place, with the folder it was made in. */
interface Made {
  parent: Pinned;
  name: string;
  folder: Pinned;
}

/** Removes folders made on the way, deepest first; one that is no longer empty stays. */
async function unmake(made: Made[]): Promise<void> {
  for (const m of made.reverse()) {
    await m.folder.close();
    await removeEntryFolder(m.parent, m.name).catch(() => undefined);
  }
}

/**
 * The pinned folder an opened path belongs in, creating the missing folders on the way (mkdir -p),
 * each inside the one before it: a link planted on the way is refused, never followed.
 */
export async function placeOf(target: Opened, dirMode: number): Promise<Place> {
  if (!target.folder) throw forbidden();
  if (target.blocked) throw conflict('a file stands where a folder would have to be');
  const made: Made[] = [];
  let folder = target.folder;
  try {
    for (const seg of target.missing.slice(0, -1)) {
      if (seg === '..') throw forbidden();
      const parent = folder;
      folder = await makeEntryFolder(parent, seg, dirMode).catch((err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? conflict(`${seg} exists and is not a folder`) : err;
      });
      made.push({ parent, name: seg, folder });
    }
  } catch (err) {
    await unmake(made);
    throw err;
  }
  return {
    folder,
    name: target.leaf,
    release: () => closeAll(made.map((m) => m.folder)),
    undo: () => unmake(made),
  };
}

/**
 * Writes a stream into `name` of a pinned folder atomically (architecture, security model 9): into
 * a staging file beside it, fsync, then one rename over the name. A failure removes only the
 * staging file; an existing file stays intact and readable until the rename.
 */
async function writeInto(
  ledger: StagingLedger,
  folder: Pinned,
  name: string,
  mode: number,
  fill: (fh: fsp.FileHandle) => Promise<void>,
  put: (staging: string, size: number) => Promise<void> = (staging) =>
    renameEntry(folder, staging, folder, name),
): Promise<void> {
  const staging = stagingName(name);
  // Recorded first: a process killed from here on leaves a file the next start removes.
  const forget = ledger.note(folder, staging);
  let fh: fsp.FileHandle;
  try {
    fh = await createEntryFile(folder, staging, mode);
  } catch (err) {
    forget();
    throw err;
  }
  let renamed = false;
  try {
    await fill(fh);
    await fh.chmod(mode);
    await fh.sync();
    const { size } = await fh.stat();
    await fh.close();
    await put(staging, size);
    renamed = true;
  } finally {
    if (!renamed) {
      await fh.close().catch(() => undefined);
      await unlinkEntry(folder, staging).catch(() => undefined);
    }
    forget();
  }
}

/**
 * Writes a request body to an opened path (creating missing folders), replacing a file
 * atomically. `length` is what the body says it holds (Content-Length): the quota is checked for
 * it before anything is made, and for every byte past it as they come.
 */
export async function writeFileAtomic(
  access: FileAccess,
  r: Opened,
  body: Readable,
  opts: { fileMode: number; dirMode: number; length?: number },
): Promise<fs.BigIntStats> {
  if (r.stat?.isDirectory()) throw conflict('a folder exists at this path');
  if (r.stat && !r.stat.isFile()) throw forbidden();
  await access.locks.assertWritable(access, r, { member: !r.linkStat });
  const replaced = r.stat ? r.stat.size : 0;
  const hold = await access.quota.reserve(access, r.real, (opts.length ?? 0) - replaced);
  try {
    const place = await placeOf(r, opts.dirMode);
    try {
      // Keep the mode of a file being replaced, as truncating it in place did.
      const mode = r.stat ? r.stat.mode & 0o7777 : opts.fileMode;
      // A body longer than it said (or that said nothing) is refused at the chunk that no longer fits.
      const check = hold.limited ? (received: number) => hold.need(received - replaced) : undefined;
      const fill = async (fh: fsp.FileHandle) =>
        void (await writeBody(fh, body, { flushEvery: FLUSH_EVERY, check }));
      // The rename counts what it really replaced: the file measured above may be gone by now.
      await writeInto(access.staging, place.folder, place.name, mode, fill, (staging, size) =>
        replaceCounted(hold, place.folder, staging, place.folder, place.name, size, () =>
          access.quota.beforeReplace?.(joinReal(place.folder.real, place.name)),
        ),
      ).catch(async (err: unknown) => {
        await place.undo();
        throw err;
      });
      return await statEntry(place.folder, place.name);
    } finally {
      await place.release();
    }
  } finally {
    hold.release();
  }
}

/** POST on a folder path: mkdir -p (an existing folder is fine, an existing file is a conflict). */
export async function makeDirectory(access: FileAccess, r: Opened, dirMode: number): Promise<void> {
  if (r.stat) {
    if (r.stat.isDirectory()) return;
    throw conflict('a file exists at this path');
  }
  await access.locks.assertWritable(access, r, { member: true });
  const place = await placeOf(r, dirMode);
  try {
    const made = await makeEntryFolder(place.folder, place.name, dirMode).catch(
      (err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? conflict('a file exists at this path') : err;
      },
    );
    await made.close();
  } finally {
    await place.release();
  }
}

/** Every descendant (and its mirror under `mirror`, when given) must pass the rules (contract 1.7). */
export async function checkDescendants(
  access: FileAccess,
  src: Opened,
  follow: boolean,
  mirror?: string,
): Promise<void> {
  if (!access.rules.hasRules || !src.stat?.isDirectory() || !src.node) return;
  for await (const e of walkTree(access, src.node, src.virtual, { follow })) {
    if (!access.rulesAllowResolved(e.virtual, e.real)) throw forbidden();
    if (mirror && !access.rules.allowedByRules(mirror + e.virtual.slice(src.virtual.length)))
      throw forbidden();
  }
}

/**
 * What a delete may remove: the scope itself never, every descendant must pass the rules, and
 * no lock of someone else may cover it or anything in it.
 */
export async function assertDeletable(access: FileAccess, r: Opened): Promise<void> {
  if (r.virtual === '/' || !r.folder) throw forbidden();
  if (!r.linkStat) throw notFound();
  await access.locks.assertWritable(access, r, { deep: true, member: true });
  await checkDescendants(access, r, false);
}

/** DELETE: the link itself when the path is a link; the whole tree otherwise (descendants checked). */
export async function deletePath(access: FileAccess, r: Opened): Promise<void> {
  await assertDeletable(access, r);
  await removeCounted(access, r);
}

/** Removes what an opened path names (a link itself), taking its bytes off the counted scopes. */
export async function removeCounted(access: FileAccess, r: Opened): Promise<void> {
  const hold = await access.quota.holdFor(access, r.entry);
  const size = hold.active ? await bytesOf(access, r.isSymlink ? { virtual: r.virtual } : r, false) : 0;
  try {
    await removeTree(r.folder!, r.leaf);
    hold.commit(-size);
  } finally {
    hold.release();
  }
}

/**
 * Copies the entry `name` of a pinned folder, as it is (links copied as links, special files
 * inside a folder skipped, a special file itself refused), to `toName` in another pinned folder:
 * what `moveEntry` does where no rename can. The destination must not exist; the caller removes a
 * failed copy.
 */
export async function copyEntryAsIs(
  access: FileAccess,
  from: Pinned,
  name: string,
  to: Pinned,
  toName: string,
  progress: Progress = {},
): Promise<void> {
  const node = await from.lookup(name);
  if (!node) throw notFound();
  try {
    if (node.stat.isSymbolicLink()) {
      await makeEntryLink(to, toName, await readEntryLink(from, name));
    } else if (node.stat.isFile()) {
      const input = await openEntryFile(from, name);
      try {
        await copyFileInto(access, input, node.stat.mode, to, toName, progress);
      } finally {
        await input.close();
      }
    } else if (node.stat.isDirectory()) {
      const top = await makeEntryFolder(to, toName, node.stat.mode & 0o7777);
      try {
        await copyTree(access, node, '/' + name, top, true, false, progress);
      } finally {
        await top.close();
      }
    } else {
      // Nothing to copy it with: it stays where it is rather than be lost on the way.
      throw forbidden('a special file (a pipe, socket or device) cannot go to another file system');
    }
  } finally {
    await node.close();
  }
}

/** `a.txt` → `a(1).txt`, `a.tar.gz` → `a.tar(1).gz`, `.env` → `(1).env`, `dir` → `dir(1)`. */
export function numberedName(name: string, n: number): string {
  const ext = extensionOf(name);
  return `${name.slice(0, name.length - ext.length)}(${n})${ext}`;
}

/** The first free `name(N)` beside an opened destination (rename=true); the caller closes it. */
export async function freeDestination(access: FileAccess, dst: Opened): Promise<Opened> {
  const parent = dst.virtual.slice(0, dst.virtual.lastIndexOf('/')) || '/';
  for (let n = 1; n < 100_000; n++) {
    const candidate = await access.open(joinVirtual(parent, numberedName(dst.name, n)), {
      followFinal: false,
    });
    if (!candidate.linkStat) return candidate;
    await candidate.close();
  }
  throw conflict();
}

/** Copies a pinned regular file into `name` of a pinned folder through a staging file. */
async function copyFileInto(
  access: FileAccess,
  source: fsp.FileHandle,
  mode: number,
  folder: Pinned,
  name: string,
  progress: Progress = {},
): Promise<void> {
  await writeInto(access.staging, folder, name, mode & 0o7777, (out) => copyHandle(source, out, progress));
  progress.done?.(0, 1);
}

/**
 * Copies a file or merges a folder tree (links dereferenced within the scope, escaping ones
 * skipped, special files skipped). Folders get the source folder's mode. Every folder of the copy
 * is created inside the one above it and entered by descriptor: a link already standing in the
 * destination where the copy needs a folder is a conflict, never a way out.
 */
export async function copyPath(
  access: FileAccess,
  src: Opened,
  dst: Opened,
  dirMode: number,
  progress: Progress = {},
): Promise<void> {
  if (!src.stat || !src.node) throw notFound();
  if (!src.stat.isDirectory()) {
    if (isSpecial(src.stat)) throw forbidden();
    const input = await openPinnedFile(src.node);
    try {
      const place = await placeOf(dst, dirMode);
      try {
        await copyFileInto(access, input, src.stat.mode, place.folder, place.name, progress).catch(
          async (err: unknown) => {
            await place.undo();
            throw err;
          },
        );
      } finally {
        await place.release();
      }
    } finally {
      await input.close();
    }
    return;
  }
  if (dst.stat?.isDirectory() && dst.node) {
    // A merge: on failure, what the copy added goes again (files it replaced stay replaced, whole).
    progress.done?.(0, 1);
    await copyTree(access, src.node, src.virtual, dst.node, false, true, progress);
    return;
  }
  if (dst.linkStat) throw conflict('a file or link exists at the destination');
  const place = await placeOf(dst, dirMode);
  try {
    const top = await makeEntryFolder(place.folder, place.name, src.stat.mode & 0o7777).catch(
      (err: NodeJS.ErrnoException) => {
        throw err.code === 'EEXIST' ? conflict('a file or link exists at the destination') : err;
      },
    );
    try {
      progress.done?.(0, 1);
      await copyTree(access, src.node, src.virtual, top, true, true, progress);
    } catch (err) {
      // Nobody may see half a copy: the folder it made goes, with everything in it.
      await top.close();
      await removeTree(place.folder, place.name).catch(() => undefined);
      await place.undo();
      throw err;
    }
    await top.close();
  } finally {
    await place.release();
  }
}

/**
 * Mirrors the tree below the pinned folder `src` (at `srcVirtual`) into the pinned folder `top`:
 * with `follow`, links inside the scope are copied as what they lead to; without, as links. When
 * the copy fails and `top` is not its own (a merge), the entries it added are removed again
 * before the error goes on.
 */
async function copyTree(
  access: FileAccess,
  src: Pinned,
  srcVirtual: string,
  top: Pinned,
  topIsNew: boolean,
  follow: boolean,
  progress: Progress = {},
): Promise<void> {
  // The destination folders along the walk's current path (the walk goes depth first).
  const path: Array<{ virtual: string; folder: Pinned; isNew: boolean }> = [
    { virtual: srcVirtual, folder: top, isNew: topIsNew },
  ];
  // Entries the copy added to folders that existed before it, with those folders kept open.
  const added: Array<{ folder: Pinned; name: string }> = [];
  const kept = new Set<Pinned>([top]);
  const leave = async (depth: number) => {
    while (path.length > depth) {
      const left = path.pop()!.folder;
      if (!kept.has(left)) await left.close();
    }
  };
  try {
    for await (const e of walkTree(access, src, srcVirtual, { follow })) {
      progress.signal?.throwIfAborted();
      const parentVirtual = e.virtual.slice(0, e.virtual.lastIndexOf('/')) || '/';
      let depth = path.length;
      while (depth > 0 && path[depth - 1]!.virtual !== parentVirtual) depth--;
      if (depth === 0) throw forbidden();
      await leave(Math.max(depth, 1));
      const { folder: into, isNew: intoIsNew } = path[path.length - 1]!;
      const name = e.virtual.slice(e.virtual.lastIndexOf('/') + 1);
      const existed = intoIsNew ? false : !!(await statEntry(into, name).catch(() => undefined));
      const remember = () => {
        if (intoIsNew || existed) return;
        added.push({ folder: into, name });
        kept.add(into);
      };
      if (e.stat.isDirectory()) {
        const folder = await makeEntryFolder(into, name, e.stat.mode & 0o7777).catch(
          (err: NodeJS.ErrnoException) => {
            throw err.code === 'EEXIST'
              ? conflict(`the destination has a file or link where the copy needs the folder ${name}`)
              : err;
          },
        );
        remember();
        progress.done?.(0, 1);
        path.push({ virtual: e.virtual, folder, isNew: !existed });
      } else if (e.stat.isFile()) {
        const input = await openEntryFile(e.folder, e.name);
        try {
          await copyFileInto(access, input, e.stat.mode, into, name, progress);
          remember();
        } finally {
          await input.close();
        }
      } else if (e.stat.isSymbolicLink()) {
        await makeEntryLink(into, name, await readEntryLink(e.folder, e.name));
        remember();
        progress.done?.(0, 1);
      }
    }
  } catch (err) {
    await leave(1);
    for (const a of added.reverse()) await removeTree(a.folder, a.name).catch(() => undefined);
    throw err;
  } finally {
    await leave(1);
    kept.delete(top);
    await closeAll(kept);
  }
}

/**
 * Moves the entry `name` of a pinned folder, as it is (a link stays a link), to `toName` in
 * another: one rename where it can, and across file systems (EXDEV) a journaled copy then switch
 * (files/moves.ts), so that neither a failure nor a killed process leaves half of it anywhere.
 * `alongside` runs, for a copied move only, in the transaction that records the copy whole: records
 * that must exist exactly when the move happens (the caller does them itself after a rename).
 */
export async function moveEntry(
  access: FileAccess,
  from: Pinned,
  name: string,
  to: Pinned,
  toName: string,
  alongside?: () => void,
  progress: Progress = {},
): Promise<{ copied: boolean }> {
  try {
    await renameEntry(from, name, to, toName);
    return { copied: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const move = await access.moves.begin(from, name, to, toName);
  try {
    await copyEntryAsIs(access, from, name, to, move.stagingName, progress);
  } catch (err) {
    await move.undo();
    throw err;
  }
  await move.finish(alongside);
  return { copied: true };
}

/**
 * Move/rename: the entry itself (a link stays a link), across file systems too (`moveEntry`). A
 * folder moved onto an existing folder is merged into it: copied in, then the source removed.
 */
export async function movePath(
  access: FileAccess,
  src: Opened,
  dst: Opened,
  dirMode: number,
  progress: Progress = {},
): Promise<void> {
  if (!src.folder) throw forbidden();
  progress.signal?.throwIfAborted();
  const place = await placeOf(dst, dirMode);
  try {
    const merge = !!dst.linkStat?.isDirectory() && !!src.linkStat?.isDirectory();
    if (!merge) {
      await moveEntry(access, src.folder, src.leaf, place.folder, place.name, undefined, progress).catch(
        async (err: unknown) => {
          await place.undo();
          throw err;
        },
      );
      return;
    }
    await mergeFolder(access, src, dst, place, dirMode, progress);
  } finally {
    await place.release();
  }
}

/** A folder moved onto an existing one: an empty one is replaced by a rename, else copied in. */
async function mergeFolder(
  access: FileAccess,
  src: Opened,
  dst: Opened,
  place: Place,
  dirMode: number,
  progress: Progress,
): Promise<void> {
  try {
    await renameEntry(src.folder!, src.leaf, place.folder, place.name);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
  }
  const followed = await access.open(src.virtual);
  try {
    const target = await access.open(dst.virtual);
    try {
      await copyPath(access, followed, target, dirMode, progress);
    } finally {
      await target.close();
    }
  } catch (copyErr) {
    // The copy cleaned up after itself; the folders made for it go too, and the source stays.
    await place.undo();
    throw copyErr;
  } finally {
    await followed.close();
  }
  // Once the copy is whole the move completes: a cancel from here on would cut the source.
  await access.moves.removeSource(src.folder!, src.leaf, place.folder, place.name);
}

/**
 * `copyPath` under the quotas covering the destination: the copy's size (what replaced files
 * held given back) is checked before the first byte; what it really added is counted after.
 * An entry that gives way whole (`replacement` of kind `delete`) goes only once that check passed.
 */
async function copyCounted(
  access: FileAccess,
  src: Opened,
  dst: Opened,
  dirMode: number,
  progress: Progress,
  replacement: Replacement | undefined,
): Promise<void> {
  const replacing = replacement?.kind === 'delete';
  const hold = await access.quota.holdFor(access, dst.real);
  let target = dst;
  try {
    let before = 0;
    if (hold.active) {
      before = replacing ? 0 : await bytesOf(access, dst, false);
      const size = await bytesOf(access, src, true);
      // A merge keeps what it does not replace: only a replaced file gives its bytes back, and
      // an entry deleted for good gives back all of it (one in the trash still counts).
      hold.need(size - (replacing ? replacement.freed : dst.stat?.isFile() ? before : 0));
    }
    if (replacing) {
      await replacement.apply();
      target = await access.open(dst.virtual, { followFinal: false });
    }
    await copyPath(access, src, target, dirMode, progress);
    if (hold.active) {
      const after = await access.open(dst.virtual, { rules: false });
      try {
        hold.commit((await bytesOf(access, after, false)) - before);
      } finally {
        await after.close();
      }
    }
  } finally {
    hold.release();
    if (target !== dst) await target.close();
  }
}

/**
 * `movePath` under the quotas: a move within the scopes it stays in changes nothing; into a
 * scope with a quota it is checked like a copy, and counted out of the scopes it leaves. An
 * entry that gives way whole goes only once that check passed.
 */
async function moveCounted(
  access: FileAccess,
  src: Opened,
  dst: Opened,
  dirMode: number,
  progress: Progress,
  replacement: Replacement | undefined,
): Promise<void> {
  const replacing = replacement?.kind === 'delete';
  const hold = await access.quota.holdFor(access, dst.entry, src.entry);
  // A rename over a file replaces it; over a folder it merges (see movePath), nothing given back.
  const overwritten =
    !replacing && dst.linkStat?.isFile() ? await access.quota.holdFor(access, dst.entry) : undefined;
  let target = dst;
  try {
    const size = hold.active
      ? await bytesOf(access, src.isSymlink ? { virtual: src.virtual } : src, false)
      : 0;
    const replaced = overwritten?.active ? await bytesOf(access, dst, false) : 0;
    hold.need(size - replaced);
    if (replacing) {
      await replacement.apply();
      target = await access.open(dst.virtual, { followFinal: false });
    }
    await movePath(access, src, target, dirMode, progress);
    overwritten?.commit(-replaced);
    hold.commit(size);
  } finally {
    hold.release();
    overwritten?.release();
    if (target !== dst) await target.close();
  }
}

export interface PatchRequest {
  action: string;
  override: boolean;
  rename: boolean;
  /** What `override` does to an entry in the way (see `ReplaceMode`); `merge` when not said. */
  mode?: ReplaceMode;
}

/** Whether an existing destination holds the source (is it, or a folder above it). */
function holdsSource(src: Opened, srcReal: string, dst: Opened): boolean {
  return isInside(dst.virtual, src.virtual) || isInside(dst.real, srcReal);
}

/**
 * PATCH /api/resources (contract 5.6) and WebDAV's COPY and MOVE after the route opened both
 * paths: order of checks, source-is-parent, a destination holding the source, conflicts,
 * auto-naming, permissions, descendant rules and what gives way at the destination (`replace`,
 * the one replace step of files/trash.ts). Every check passes before anything changes. Answers
 * where the item ended up (the caller closes `src` and `target`; a different answer is closed
 * here).
 */
export async function copyOrMove(
  access: FileAccess,
  src: Opened,
  target: Opened,
  req: PatchRequest,
  replace: ReplaceStep,
  dirMode: number,
  progress: Progress = {},
): Promise<{ virtual: string; entry: string; real: string }> {
  const isRename = req.action === 'rename';
  if (src.virtual === '/' || target.virtual === '/') throw forbidden();
  if (!src.linkStat) throw notFound();
  const srcReal = isRename ? src.entry : src.real;
  if (
    (target.virtual !== src.virtual && target.virtual.startsWith(src.virtual + '/')) ||
    (target.real !== srcReal && isInside(srcReal, target.real) && src.stat?.isDirectory())
  ) {
    throw badRequest('source is parent');
  }
  const sameFile =
    isRename &&
    !!target.linkStat &&
    src.linkStat.ino === target.linkStat.ino &&
    src.linkStat.dev === target.linkStat.dev &&
    src.folder?.real === target.folder?.real;
  let dst = target;
  try {
    let replacement: Replacement | undefined;
    if (!sameFile) {
      if (!req.override && !req.rename && dst.linkStat) throw conflict();
      if (req.rename && dst.linkStat) dst = await freeDestination(access, dst);
      // Replacing (or merging into) a folder that holds the source would take the source along.
      if (dst.linkStat && holdsSource(src, srcReal, dst)) {
        throw forbidden('the destination holds the source: it cannot be replaced by it');
      }
    }
    // Locks of others on what the operation takes away or writes over, and below it.
    if (isRename) await access.locks.assertWritable(access, src, { deep: true, member: true });
    await access.locks.assertWritable(access, dst, { deep: true, member: true });
    await checkDescendants(access, src, !isRename, dst.virtual);
    if (!sameFile && dst.linkStat) {
      const incomingIsDir = !!(isRename ? src.linkStat : src.stat)?.isDirectory();
      replacement = await replace.plan(access, dst, incomingIsDir, req.mode ?? 'merge');
    }
    switch (req.action) {
      case 'copy':
        if (dst.real === src.real) throw new AppError('internal', 'cannot copy a file onto itself');
        await copyCounted(access, src, dst, dirMode, progress, replacement);
        break;
      case 'rename':
        await moveCounted(access, src, dst, dirMode, progress, replacement);
        break;
      default:
        throw badRequest(`unsupported action ${req.action}: invalid request params`);
    }
    return { virtual: dst.virtual, entry: dst.entry, real: dst.real };
  } finally {
    if (dst !== target) await dst.close();
  }
}

/** Streams a file through a hash (contract 5.1 step 4). */
export async function checksum(r: Opened, algorithm: ChecksumAlgorithm): Promise<string> {
  if (!r.node) throw notFound();
  const fh = await openPinnedFile(r.node);
  try {
    const hash = crypto.createHash(algorithm);
    await pipeline(fh.createReadStream({ autoClose: false }), hash);
    return hash.digest('hex');
  } finally {
    await fh.close();
  }
}

/** statfs of a folder; a file answers zeros (contract 5.8). */
export async function usage(r: Opened): Promise<Usage> {
  if (!r.stat || !r.node) throw notFound();
  if (!r.stat.isDirectory()) return { total: 0, used: 0 };
  const s = await statFileSystem(r.node);
  return { total: s.blocks * s.bsize, used: (s.blocks - s.bfree) * s.bsize };
}
