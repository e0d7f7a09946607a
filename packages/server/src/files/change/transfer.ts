import type fsp from 'node:fs/promises';
import { conflict, forbidden, notFound } from '../../errors.js';
import type { Repos } from '../../store/index.js';
import type { FileAccess } from '../access/access.js';
import {
  closeAll,
  exchangeEntries,
  isSpecial,
  joinReal,
  makeEntryFolder,
  makeEntryLink,
  openEntryFile,
  openPinnedFile,
  readEntryLink,
  readFolder,
  removeEntryFolder,
  renameEntry,
  statEntry,
  unlinkEntry,
  type Pinned,
} from '../access/anchor.js';
import { extensionOf } from '../listing/mime.js';
import { joinVirtual, type Opened } from '../access/resolver.js';
import { isStagingName } from '../access/staging-names.js';
import { walkTree } from '../access/tree.js';
import { renameInto } from './rename-into.js';
import { type Place, type Progress, copyHandle, placeOf, writeInto } from './write.js';

/**
 * Copying and moving entries and trees between pinned folders: copies go through descriptors,
 * moves rename where they can and copy then switch across file systems.
 */

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
        await copyFileInto(access, input, node.stat.mode, to, toName, false, progress);
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

/**
 * Copies a pinned regular file into `name` of a pinned folder through a staging file. A lock
 * granted on what it replaces while the bytes were copied holds the rename back. Unless `replace`
 * (a file was there when the copy looked, and may be replaced), whatever took the name meanwhile
 * stays and the copy is refused (409).
 */
async function copyFileInto(
  access: FileAccess,
  source: fsp.FileHandle,
  mode: number,
  folder: Pinned,
  name: string,
  replace: boolean,
  progress: Progress = {},
): Promise<void> {
  const real = joinReal(folder.real, name);
  await writeInto(
    access.staging,
    folder,
    name,
    mode & 0o7777,
    (out) => copyHandle(source, out, progress),
    async (staging) => {
      await access.quota.beforeReplace?.(real);
      await access.locks.assertWritable(access, { entry: real, real }, { member: true });
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
    await copyTree(access, src.node, src.virtual, dst.node, false, true, progress, dst.virtual);
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
      await copyTree(access, src.node, src.virtual, top, true, true, progress, dst.virtual);
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

/**
 * Mirrors the tree below the pinned folder `src` (at `srcVirtual`) into the pinned folder `top`:
 * with `follow`, links inside the scope are copied as what they lead to; without, as links. When
 * the copy fails, what it made is taken back (`undoMade`) before the error goes on; files it
 * replaced in a merge stay replaced, whole.
 */
async function copyTree(
  access: FileAccess,
  src: Pinned,
  srcVirtual: string,
  top: Pinned,
  topIsNew: boolean,
  follow: boolean,
  progress: Progress = {},
  /** Where the copy goes, as the caller sees it: each entry's mirror there must pass the rules. */
  mirrorVirtual?: string,
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
        const real = joinReal(into.real, name);
        await access.locks.assertWritable(access, { entry: real, real }, { member: true });
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
          await copyFileInto(access, input, e.stat.mode, into, name, existed, progress);
          await remember(false);
        } finally {
          await input.close();
        }
      } else if (e.stat.isSymbolicLink()) {
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
 * one delete before.
 */
export async function moveEntry(
  access: FileAccess,
  from: Pinned,
  name: string,
  to: Pinned,
  toName: string,
  opts: { alongside?: (tx: Repos) => Promise<unknown>; progress?: Progress; replace?: boolean } = {},
): Promise<{ copied: boolean }> {
  const replace = opts.replace ?? false;
  const real = joinReal(to.real, toName);
  // It lands past the locks of others as they are then, and only while its caller may move it.
  const landing = async () => {
    await access.locks.assertWritable(access, { entry: real, real }, { member: true });
    await opts.progress?.stillAllowed?.();
  };
  await access.quota.beforeReplace?.(real);
  await landing();
  try {
    await renameInto(from, name, to, toName, replace);
    return { copied: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const move = await access.moves.begin(from, name, to, toName);
  try {
    await copyEntryAsIs(access, from, name, to, move.stagingName, opts.progress);
    await landing();
  } catch (err) {
    await move.undo();
    throw err;
  }
  await move.finish(opts.alongside, replace);
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
      // What the caller saw at the destination (and was allowed to replace) may be replaced;
      // an empty place must still be empty.
      const replace = !!dst.linkStat;
      await moveEntry(access, src.folder, src.leaf, place.folder, place.name, { progress, replace }).catch(
        async (err: unknown) => {
          await place.undo();
          throw err;
        },
      );
      return;
    }
    await mergeFolder(access, src, dst.virtual, place, progress);
  } finally {
    await place.release();
  }
}

/**
 * A folder moved onto an existing one: an empty one is replaced by a rename. Otherwise each entry
 * of the source moves into the destination by itself (one rename, or a journaled copy across file
 * systems: `moveEntry`): a folder meeting a folder merges in turn, and a file or link meeting a
 * file or link is exchanged with it (`renameat2(RENAME_EXCHANGE)`), the replaced one kept at the
 * source's place until the merge is whole. Nothing is copied and then removed, so nothing put
 * into the source meanwhile is lost: what the walk did not move stays where it was, in its
 * folder, kept for it. A folder meeting a file (or the other way) is refused before anything
 * moves; each entry lands past the locks of others and only while its caller may still move it;
 * a failure or a cancel midway moves back what had moved and puts back what it replaced.
 */
async function mergeFolder(
  access: FileAccess,
  src: Opened,
  dstVirtual: string,
  place: Place,
  progress: Progress,
): Promise<void> {
  try {
    await progress.stillAllowed?.();
    // Into an empty folder: one rename, of everything the source holds.
    const whole = progress.sizes ? await entryBytes(access, src.folder!, src.leaf, src.linkStat!) : 0;
    await renameEntry(src.folder!, src.leaf, place.folder, place.name);
    await progress.done?.(whole, 0);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
  }
  const held = new Set<Pinned>();
  const hold = async (folder: Pinned, name: string) => {
    const pin = await folder.lookup(name);
    if (pin) held.add(pin);
    return pin;
  };
  // What moved (to move back on failure), what it replaced (now at the source's place, removed
  // once the merge is whole), and the source folders it went through (removed then, when empty).
  const moved: Array<{ from: Pinned; to: Pinned; name: string; exchanged: boolean }> = [];
  const replaced: Array<{ folder: Pinned; name: string; ino: bigint }> = [];
  const passed: Array<{ folder: Pinned; name: string }> = [];
  try {
    const from = await hold(src.folder!, src.leaf);
    const into = await hold(place.folder, place.name);
    if (!from?.stat.isDirectory() || !into?.stat.isDirectory()) {
      throw conflict('the folder changed while it was being moved');
    }
    await assertMergeable(from, into);
    const merge = async (from: Pinned, into: Pinned, rel: string): Promise<void> => {
      for (const name of await entryNames(from)) {
        progress.signal?.throwIfAborted();
        const source = await statEntry(from, name).catch(() => undefined);
        if (!source) continue;
        // Checked before the merge began (checkDescendants) for what was there; an entry put into
        // the source since is checked as it comes, at both ends.
        const inner = `${rel}/${name}`;
        assertEntryRules(access, src.virtual + inner, joinReal(from.real, name), dstVirtual + inner);
        const there = await statEntry(into, name).catch(() => undefined);
        const real = joinReal(into.real, name);
        // Each entry lands past the locks of others as it is now, as a copied file does.
        const landing = async () => {
          await access.quota.beforeReplace?.(real);
          await access.locks.assertWritable(access, { entry: real, real }, { member: true });
          await progress.stillAllowed?.();
        };
        if (there?.isDirectory() && source.isDirectory()) {
          await access.locks.assertWritable(access, { entry: real, real }, { member: true });
          const [innerFrom, innerInto] = [await hold(from, name), await hold(into, name)];
          if (!innerFrom?.stat.isDirectory() || !innerInto?.stat.isDirectory()) {
            throw conflict('the folder changed while it was being moved');
          }
          await merge(innerFrom, innerInto, inner);
          passed.push({ folder: from, name });
        } else if (there && (there.isDirectory() || source.isDirectory())) {
          throw conflict(
            `the destination has a file where the move has the folder ${name}, or the other way round`,
          );
        } else if (there) {
          // A file or link replaces a file or link (the merge's override): exchanged, so that the
          // one replaced can come back if the merge does not complete.
          if (progress.sizes) await progress.done?.(Number(source.size) - Number(there.size), 0);
          await landing();
          if (await exchangeEntries(from, name, into, name)) {
            moved.push({ from, to: into, name, exchanged: true });
            replaced.push({ folder: from, name, ino: (await statEntry(from, name)).ino });
          } else {
            // No exchange here (across file systems, or no native addon): replaced for good.
            await moveEntry(access, from, name, into, name, { progress, replace: true });
            moved.push({ from, to: into, name, exchanged: false });
          }
          await progress.done?.(0, 1);
        } else {
          // A free name stays free for it only: one taken meanwhile is refused.
          if (progress.sizes) await progress.done?.(await entryBytes(access, from, name, source), 0);
          await access.locks.assertWritable(access, { entry: real, real }, { member: true });
          await moveEntry(access, from, name, into, name, { progress, replace: false });
          moved.push({ from, to: into, name, exchanged: false });
          await progress.done?.(0, 1);
        }
      }
    };
    await merge(from, into, '');
  } catch (err) {
    // What moved goes back, last first (an exchanged entry by exchanging again, which puts back
    // what it replaced), where it can; what cannot stays merged.
    for (const m of moved.reverse()) {
      const back = m.exchanged
        ? exchangeEntries(m.to, m.name, m.from, m.name)
        : renameInto(m.to, m.name, m.from, m.name, false);
      await back.catch(() => undefined);
    }
    await place.undo();
    await closeAll(held);
    throw err;
  }
  try {
    // Whole: what was replaced goes (while it is still the entry replaced), then every source
    // folder left empty, deepest first; a folder someone put something in meanwhile stays.
    for (const r of replaced) {
      const st = await statEntry(r.folder, r.name).catch(() => undefined);
      if (st?.ino === r.ino) await unlinkEntry(r.folder, r.name).catch(() => undefined);
    }
    for (const p of passed) await removeEntryFolder(p.folder, p.name).catch(() => undefined);
    await removeEntryFolder(src.folder!, src.leaf).catch(() => undefined);
  } finally {
    await closeAll(held);
  }
}

/** 403 unless the rules allow an entry where it is (`virtual`, `real`) and where it goes (`mirror`). */
function assertEntryRules(access: FileAccess, virtual: string, real: string, mirror: string): void {
  if (!access.rules.hasRules) return;
  if (!access.rulesAllowResolved(virtual, real) || !access.rules.allowedByRules(mirror)) throw forbidden();
}

/** Bytes of an entry as it is (a folder's files, walked; a link counts nothing). */
async function entryBytes(
  access: FileAccess,
  folder: Pinned,
  name: string,
  st: { isFile(): boolean; isDirectory(): boolean; size: bigint | number },
): Promise<number> {
  if (st.isFile()) return Number(st.size);
  if (!st.isDirectory()) return 0;
  const pin = await folder.lookup(name);
  if (!pin) return 0;
  try {
    let bytes = 0;
    for await (const e of walkTree(access, pin, '/', { follow: false, staging: true })) {
      if (e.stat.isFile()) bytes += Number(e.stat.size);
    }
    return bytes;
  } finally {
    await pin.close();
  }
}

/** The names in a folder, staging names left out (another write's, which it renames itself). */
async function entryNames(folder: Pinned): Promise<string[]> {
  return (await readFolder(folder)).filter((name) => !isStagingName(name));
}

/**
 * Refuses (409) a merge where a folder of the source meets a file or link of the destination, or
 * the other way round, before anything moves.
 */
async function assertMergeable(from: Pinned, into: Pinned): Promise<void> {
  for (const name of await entryNames(from)) {
    const there = await statEntry(into, name).catch(() => undefined);
    if (!there) continue;
    const source = await statEntry(from, name).catch(() => undefined);
    if (!source) continue;
    if (source.isDirectory() && there.isDirectory()) {
      const innerFrom = await from.lookup(name);
      const innerInto = await into.lookup(name);
      try {
        if (innerFrom?.stat.isDirectory() && innerInto?.stat.isDirectory()) {
          await assertMergeable(innerFrom, innerInto);
        }
      } finally {
        await closeAll([innerFrom, innerInto]);
      }
    } else if (source.isDirectory() || there.isDirectory()) {
      throw conflict(
        `the destination has a file where the move has the folder ${name}, or the other way round`,
      );
    }
  }
}
