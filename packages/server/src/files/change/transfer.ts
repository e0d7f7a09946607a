import type fs from 'node:fs';
import type fsp from 'node:fs/promises';
import { conflict, forbidden, notFound } from '../../errors.js';
import type { Repos } from '../../store/index.js';
import type { FileAccess } from '../access/access.js';
import {
  closeAll,
  isSpecial,
  joinReal,
  makeEntryFolder,
  makeEntryLink,
  openEntryFile,
  openPinnedFile,
  readEntryLink,
  removeEntryFolder,
  statEntry,
  unlinkEntry,
  type Pinned,
} from '../access/anchor.js';
import { joinVirtual, type Opened } from '../access/resolver.js';
import { walkTree } from '../access/tree.js';
import { numberedName } from './numbered-name.js';
import type { QuotaHold } from './quota-hold.js';
import { renameInto } from './rename-into.js';
import { replaceCounted } from './replace.js';
import type { TakenEntries } from './settle-source.js';
import { type Progress, copyHandle, placeOf, writeInto } from './write.js';

/**
 * Copying and moving entries and trees between pinned folders: copies go through descriptors,
 * moves rename where they can and copy then switch across file systems.
 */

/**
 * Copies the entry `name` of a pinned folder, as it is (links copied as links, files with their
 * times, special files inside a folder skipped, a special file itself refused), to `toName` in
 * another pinned folder: what `moveEntry` does where no rename can. What it reads is noted in
 * `taken`: only that goes with the source. The destination must not exist; the caller removes a
 * failed copy.
 */
export async function copyEntryAsIs(
  access: FileAccess,
  from: Pinned,
  name: string,
  to: Pinned,
  toName: string,
  progress: Progress,
  taken: TakenEntries,
): Promise<void> {
  const node = await from.lookup(name);
  if (!node) throw notFound();
  try {
    if (node.stat.isSymbolicLink()) {
      taken.note([], await statEntry(from, name));
      await makeEntryLink(to, toName, await readEntryLink(from, name));
    } else if (node.stat.isFile()) {
      const input = await openEntryFile(from, name);
      try {
        const read = await readForMove(input, [], taken);
        await copyFileInto(access, input, node.stat.mode, to, toName, false, progress, read);
      } finally {
        await input.close();
      }
    } else if (node.stat.isDirectory()) {
      const top = await makeEntryFolder(to, toName, node.stat.mode & 0o7777);
      try {
        await copyTree(access, node, '/' + name, top, { topIsNew: true, follow: false, progress, taken });
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

/** A move's copy notes the file it is about to read (its open handle), and gives its times on. */
async function readForMove(
  input: fsp.FileHandle,
  rel: readonly string[],
  taken: TakenEntries | undefined,
): Promise<fs.BigIntStats | undefined> {
  if (!taken) return undefined;
  const st = await input.stat({ bigint: true });
  taken.note(rel, st);
  return st;
}

const seconds = (ns: bigint) => Number(ns) / 1e9;

/**
 * Copies a pinned regular file into `name` of a pinned folder through a staging file. A lock
 * granted on what it replaces while the bytes were copied holds the rename back. Unless `replace`
 * (a file was there when the copy looked, and may be replaced), whatever took the name meanwhile
 * stays and the copy is refused (409). A move's copy keeps the times of what it `moves`.
 */
async function copyFileInto(
  access: FileAccess,
  source: fsp.FileHandle,
  mode: number,
  folder: Pinned,
  name: string,
  replace: boolean,
  progress: Progress = {},
  moves?: fs.BigIntStats,
): Promise<void> {
  const real = joinReal(folder.real, name);
  await writeInto(
    access.staging,
    folder,
    name,
    mode & 0o7777,
    async (out) => {
      await copyHandle(source, out, progress);
      if (moves) await out.utimes(seconds(moves.atimeNs), seconds(moves.mtimeNs));
    },
    async (staging) => {
      await access.quota.beforeReplace?.(real);
      await assertLandable(access, folder, name);
      await progress.stillAllowed?.();
      await renameInto(folder, staging, folder, name, replace);
    },
  );
  await progress.done?.(0, 1);
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
        const replace = !!dst.linkStat;
        await copyFileInto(access, input, src.stat.mode, place.folder, place.name, replace, progress).catch(
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
    await progress.done?.(0, 1);
    await copyTree(access, src.node, src.virtual, dst.node, {
      topIsNew: false,
      follow: true,
      progress,
      mirrorVirtual: dst.virtual,
    });
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
      await progress.done?.(0, 1);
      await copyTree(access, src.node, src.virtual, top, {
        topIsNew: true,
        follow: true,
        progress,
        mirrorVirtual: dst.virtual,
      });
    } catch (err) {
      // Nobody may see half a copy: what it made inside went (copyTree), and the folder goes
      // when nothing else is left in it. What others put there meanwhile stays.
      await top.close();
      await removeEntryFolder(place.folder, place.name).catch(() => undefined);
      await place.undo();
      throw err;
    }
    await top.close();
  } finally {
    await place.release();
  }
}

/** An entry a copy made, by its names below the copy's top folder (and the file's inode). */
interface MadeEntry {
  segments: string[];
  ino?: bigint;
}

/**
 * Takes back what a failed copy made, last made first: a file or link only while it is still the
 * one the copy made (same inode), a folder only once empty. What anyone else put in the
 * destination meanwhile stays; nothing is followed on the way (a folder swapped for a link ends
 * the way there).
 */
async function undoMade(top: Pinned, made: readonly MadeEntry[]): Promise<void> {
  for (const m of [...made].reverse()) {
    const held: Pinned[] = [];
    try {
      let folder = top;
      let reached = true;
      for (const seg of m.segments.slice(0, -1)) {
        const next = await folder.lookup(seg);
        if (!next) {
          reached = false;
          break;
        }
        held.push(next);
        if (!next.stat.isDirectory()) {
          reached = false;
          break;
        }
        folder = next;
      }
      if (!reached) continue;
      const name = m.segments.at(-1)!;
      if (m.ino === undefined) {
        await removeEntryFolder(folder, name);
      } else {
        const st = await statEntry(folder, name);
        if (st.ino === m.ino) await unlinkEntry(folder, name);
      }
    } catch {
      // Gone, changed, or no longer empty: it stays.
    } finally {
      await closeAll(new Set(held));
    }
  }
}

/** How `copyTree` copies. */
interface TreeCopy {
  /** The top folder was made by this copy (nothing in it to merge with). */
  topIsNew: boolean;
  /** Links inside the scope copied as what they lead to; off, as links. */
  follow: boolean;
  progress?: Progress;
  /** Where the copy goes, as the caller sees it: each entry's mirror there must pass the rules. */
  mirrorVirtual?: string;
  /** A move's copy: what it reads is noted here, and files keep their times. */
  taken?: TakenEntries;
}

/**
 * Mirrors the tree below the pinned folder `src` (at `srcVirtual`) into the pinned folder `top`.
 * When the copy fails, what it made is taken back (`undoMade`) before the error goes on; files it
 * replaced in a merge stay replaced, whole.
 */
async function copyTree(
  access: FileAccess,
  src: Pinned,
  srcVirtual: string,
  top: Pinned,
  { topIsNew, follow, progress = {}, mirrorVirtual, taken }: TreeCopy,
): Promise<void> {
  // The destination folders along the walk's current path (the walk goes depth first).
  const path: Array<{ virtual: string; folder: Pinned; isNew: boolean }> = [
    { virtual: srcVirtual, folder: top, isNew: topIsNew },
  ];
  // Everything the copy made, to take back if it fails.
  const made: MadeEntry[] = [];
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
      // The rules were checked for every entry before the copy began (checkDescendants); one put
      // into the source since is checked as it comes, at both ends.
      if (mirrorVirtual !== undefined)
        assertEntryRules(access, e.virtual, e.real, mirrorVirtual + e.virtual.slice(srcVirtual.length));
      const parentVirtual = e.virtual.slice(0, e.virtual.lastIndexOf('/')) || '/';
      let depth = path.length;
      while (depth > 0 && path[depth - 1]!.virtual !== parentVirtual) depth--;
      if (depth === 0) throw forbidden();
      await leave(Math.max(depth, 1));
      const { folder: into, isNew: intoIsNew } = path[path.length - 1]!;
      const name = e.virtual.slice(e.virtual.lastIndexOf('/') + 1);
      const existed = intoIsNew ? false : !!(await statEntry(into, name).catch(() => undefined));
      const segments = e.virtual.slice(srcVirtual === '/' ? 1 : srcVirtual.length + 1).split('/');
      const remember = async (folder: boolean) => {
        if (existed) return;
        made.push(folder ? { segments } : { segments, ino: (await statEntry(into, name)).ino });
      };
      if (!e.stat.isFile()) {
        // A folder or link lands as a file does (copyFileInto): past the locks of others, and
        // only while its caller may still make it.
        await assertLandable(access, into, name);
        await progress.stillAllowed?.();
      }
      if (e.stat.isDirectory()) {
        const folder = await makeEntryFolder(into, name, e.stat.mode & 0o7777).catch(
          (err: NodeJS.ErrnoException) => {
            throw err.code === 'EEXIST'
              ? conflict(`the destination has a file or link where the copy needs the folder ${name}`)
              : err;
          },
        );
        await remember(true);
        await progress.done?.(0, 1);
        path.push({ virtual: e.virtual, folder, isNew: !existed });
      } else if (e.stat.isFile()) {
        const input = await openEntryFile(e.folder, e.name);
        try {
          // A file there when the copy looked is replaced (a merge); one that came since is not.
          const read = await readForMove(input, segments, taken);
          await copyFileInto(access, input, e.stat.mode, into, name, existed, progress, read);
          await remember(false);
        } finally {
          await input.close();
        }
      } else if (e.stat.isSymbolicLink()) {
        taken?.note(segments, await statEntry(e.folder, e.name));
        await makeEntryLink(into, name, await readEntryLink(e.folder, e.name)).catch(
          (err: NodeJS.ErrnoException) => {
            throw err.code === 'EEXIST'
              ? conflict(`the destination already has an entry named ${name}`)
              : err;
          },
        );
        await remember(false);
        await progress.done?.(0, 1);
      }
    }
  } catch (err) {
    await leave(1);
    await undoMade(top, made);
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
 * It replaces nothing unless `replace` (see `renameInto`): an entry given way went through the
 * one delete before. With `counted`, a rename counts to that hold exactly what it replaced
 * (`replaceCounted`: measured after the rename took its place, so parallel moves onto one file
 * each count what they really replaced); the answer's `counted` says whether it did.
 */
export async function moveEntry(
  access: FileAccess,
  from: Pinned,
  name: string,
  to: Pinned,
  toName: string,
  opts: {
    alongside?: (tx: Repos) => Promise<unknown>;
    progress?: Progress;
    replace?: boolean;
    counted?: QuotaHold;
  } = {},
): Promise<{ copied: boolean; counted: boolean }> {
  const replace = opts.replace ?? false;
  const real = joinReal(to.real, toName);
  // It lands past the locks of others as they are then, and only while its caller may move it.
  const landing = async () => {
    await assertLandable(access, to, toName);
    await opts.progress?.stillAllowed?.();
  };
  await access.quota.beforeReplace?.(real);
  await landing();
  try {
    if (opts.counted) await replaceCounted(opts.counted, from, name, to, toName, 0, replace);
    else await renameInto(from, name, to, toName, replace);
    return { copied: false, counted: !!opts.counted };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const move = await access.moves.begin(from, name, to, toName);
  try {
    await copyEntryAsIs(access, from, name, to, move.stagingName, opts.progress ?? {}, move.taken);
    await landing();
  } catch (err) {
    await move.undo();
    throw err;
  }
  await move.finish(opts.alongside, replace);
  return { copied: true, counted: false };
}

/**
 * 423 when another user's lock covers the entry `name` of a pinned folder where that folder is
 * now: one renamed since it was opened (into a folder someone locked) is checked at its new place.
 */
export async function assertLandable(access: FileAccess, folder: Pinned, name: string): Promise<void> {
  const real = joinReal(await folder.currentReal(), name);
  await access.locks.assertWritable(access, { entry: real, real }, { member: true });
}

/** 403 unless the rules allow an entry where it is (`virtual`, `real`) and where it goes (`mirror`). */
export function assertEntryRules(access: FileAccess, virtual: string, real: string, mirror: string): void {
  if (!access.rules.hasRules) return;
  if (!access.rulesAllowResolved(virtual, real) || !access.rules.allowedByRules(mirror)) throw forbidden();
}
