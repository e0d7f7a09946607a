import { conflict, forbidden } from '../../errors.js';
import type { FileAccess } from '../access/access.js';
import {
  closeAll,
  exchangeEntries,
  joinReal,
  readFolder,
  removeEntryFolder,
  renameEntry,
  statEntry,
  type Pinned,
} from '../access/anchor.js';
import type { Opened } from '../access/resolver.js';
import { isStagingName } from '../access/staging-names.js';
import { walkTree } from '../access/tree.js';
import { renameInto } from './rename-into.js';
import { unlinkIfSame } from './settle-source.js';
import { assertEntryRules, moveEntry } from './transfer.js';
import { type Place, type Progress, placeOf } from './write.js';

/**
 * Move/rename: the entry itself (a link stays a link), across file systems too (`moveEntry`). A
 * folder moved onto an existing folder is merged into it entry by entry (`mergeFolder`).
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
      await unlinkIfSame(r.folder, r.name, async (st) => st.ino === r.ino).catch(() => undefined);
    }
    for (const p of passed) await removeEntryFolder(p.folder, p.name).catch(() => undefined);
    await removeEntryFolder(src.folder!, src.leaf).catch(() => undefined);
  } finally {
    await closeAll(held);
  }
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
