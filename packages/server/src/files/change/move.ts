import { conflict, forbidden } from '../../errors.js';
import type { FileAccess } from '../access/access.js';
import {
  closeAll,
  exchangeEntries,
  joinReal,
  makeEntryFolder,
  readFolder,
  removeEntryFolder,
  renameEntry,
  statEntry,
  unlinkEntry,
  type Pinned,
} from '../access/anchor.js';
import type { Opened } from '../access/resolver.js';
import { isStagingName, stagingName } from '../access/staging-names.js';
import { measureEntry, unsettledMeasure } from './measure.js';
import type { QuotaHold } from './quota-hold.js';
import { renameInto } from './rename-into.js';
import { renameToFreeName } from './numbered-name.js';
import { assertEntryRules, assertLandable, moveEntry } from './transfer.js';
import { type Place, type Progress, placeOf } from './write.js';

/**
 * Move/rename: the entry itself (a link stays a link), across file systems too (`moveEntry`). A
 * folder moved onto an existing folder is merged into it entry by entry (`mergeFolder`). With
 * `counted`, what a rename replaces is counted to that hold as it happens (`moveEntry`); the
 * answer says whether it was, and whether the entry was copied (across file systems).
 */
export async function movePath(
  access: FileAccess,
  src: Opened,
  dst: Opened,
  dirMode: number,
  progress: Progress = {},
  counted?: QuotaHold,
): Promise<{ counted: boolean; copied: boolean }> {
  if (!src.folder) throw forbidden();
  progress.signal?.throwIfAborted();
  const place = await placeOf(dst, dirMode);
  try {
    const merge = !!dst.linkStat?.isDirectory() && !!src.linkStat?.isDirectory();
    if (!merge) {
      // What the caller saw at the destination (and was allowed to replace) may be replaced;
      // an empty place must still be empty.
      const replace = !!dst.linkStat;
      const opts = { progress, replace, ...(counted && { counted }) };
      return await moveEntry(access, src.folder, src.leaf, place.folder, place.name, opts).catch(
        async (err: unknown) => {
          await place.undo();
          throw err;
        },
      );
    }
    await mergeFolder(access, src, dst.virtual, dst.linkStat!.mode & 0o7777, place, progress);
    return { counted: false, copied: false };
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
  dstMode: number,
  place: Place,
  progress: Progress,
): Promise<void> {
  await progress.stillAllowed?.();
  if (!(await isEmptyFolder(place.folder, place.name))) {
    return await mergeEntries(access, src, dstVirtual, place, progress);
  }
  try {
    // Into an empty folder: one rename, of everything the source holds.
    await access.quota.beforeReplace?.(joinReal(place.folder.real, place.name));
    await renameEntry(src.folder!, src.leaf, place.folder, place.name);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    return await mergeEntries(access, src, dstVirtual, place, progress);
  }
  // Measured where it landed: what was put into the source while it moved came along. Refused
  // (a quota), it goes back, and the empty folder it replaced is made again.
  let unsettled: number | undefined;
  try {
    if (progress.sizes) {
      const measured = await measureEntry(access, place.folder, place.name, {}, src.linkStat!);
      if (!measured.settled) {
        unsettled = measured.bytes;
        throw unsettledMeasure();
      }
      await progress.done?.(measured.bytes, 0);
    }
  } catch (err) {
    // Its old name taken meanwhile, it stays, counted (the meter counts before it refuses).
    const back = await renameInto(place.folder, place.name, src.folder!, src.leaf, false).then(
      () => true,
      () => false,
    );
    if (!back && unsettled !== undefined) {
      try {
        await progress.done?.(unsettled, 0);
      } catch {
        // Counted, whatever the meter answers: it stays where it landed.
      }
    }
    if (!back) return;
    await makeEntryFolder(place.folder, place.name, dstMode).then(
      (made) => made.close(),
      () => undefined,
    );
    throw err;
  }
}

/** Whether the entry `name` of a pinned folder is a folder holding nothing. */
async function isEmptyFolder(folder: Pinned, name: string): Promise<boolean> {
  const pin = await folder.lookup(name);
  try {
    return !!pin?.stat.isDirectory() && (await readFolder(pin)).length === 0;
  } finally {
    await pin?.close();
  }
}

/** `mergeFolder` where the destination holds something: entry by entry. */
async function mergeEntries(
  access: FileAccess,
  src: Opened,
  dstVirtual: string,
  place: Place,
  progress: Progress,
): Promise<void> {
  const held = new Set<Pinned>();
  const hold = async (folder: Pinned, name: string) => {
    const pin = await folder.lookup(name);
    if (pin) held.add(pin);
    return pin;
  };
  // What moved (to move back on failure: only while it is still the entry moved), what it
  // replaced (hidden beside the source's place, removed once the merge is whole), and the source
  // folders it went through (removed then, when empty).
  const moved: Moved[] = [];
  const replaced: Replaced[] = [];
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
          await assertLandable(access, into, name);
          await progress.stillAllowed?.();
        };
        if (there?.isDirectory() && source.isDirectory()) {
          await assertLandable(access, into, name);
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
          await landing();
          const aside = await setAside(access, from, name, there.ino);
          let exchanged: boolean;
          try {
            exchanged = await exchangeEntries(from, name, into, name);
          } catch (err) {
            await aside.drop();
            throw err;
          }
          if (exchanged && (await statEntry(from, name)).ino !== there.ino) {
            // What it replaced is not what the merge looked at: someone saved a file there since.
            await exchangeEntries(from, name, into, name);
            await aside.drop();
            throw conflict(`the destination's ${name} changed while the merge ran: it was not replaced`);
          }
          if (exchanged) {
            moved.push({ from, to: into, name, ino: source.ino, aside });
            // Hidden at once, so that a process killed before the merge is whole never shows
            // the file it replaced as one of the source's (a second merge would then put it back).
            await aside.hide();
            replaced.push(aside);
            // What landed, measured there, less what it replaced (a refusal moves it all back).
            if (progress.sizes) {
              const landed = await entryBytes(access, into, name, await statEntry(into, name));
              await progress.done?.(landed - bytesOfEntry(there), 0);
            }
          } else {
            await aside.drop();
            // No exchange here (across file systems, or no native addon): replaced for good. The
            // copy reports what it copies; what it replaces is given back first.
            if (progress.sizes) await progress.done?.(-bytesOfEntry(there), 0);
            await moveEntry(access, from, name, into, name, { progress, replace: true });
            moved.push({ from, to: into, name, ino: source.ino });
          }
          await progress.done?.(0, 1);
        } else {
          // A free name stays free for it only: one taken meanwhile is refused.
          await assertLandable(access, into, name);
          const { copied } = await moveEntry(access, from, name, into, name, { progress, replace: false });
          moved.push({ from, to: into, name, ino: source.ino });
          // A rename is measured where it landed (what was put into it meanwhile came along); a
          // copy reported what it copied. A refusal moves it all back.
          if (progress.sizes && !copied) {
            await progress.done?.(await entryBytes(access, into, name, await statEntry(into, name)), 0);
          }
          await progress.done?.(0, 1);
        }
      }
    };
    await merge(from, into, '');
  } catch (err) {
    // What moved goes back, last first, where it can; what cannot stays merged.
    for (const m of moved.reverse()) await moveBack(m).catch(() => undefined);
    await place.undo();
    await closeAll(held);
    throw err;
  }
  try {
    // Whole: what was replaced goes (while it is still the entry replaced), then every source
    // folder left empty, deepest first; a folder someone put something in meanwhile stays.
    for (const r of replaced) await r.remove().catch(() => undefined);
    for (const p of passed) await removeEntryFolder(p.folder, p.name).catch(() => undefined);
    await removeEntryFolder(src.folder!, src.leaf).catch(() => undefined);
  } finally {
    await closeAll(held);
  }
}

/** An entry a merge moved: where from and to, its inode, and what it replaced, when it was exchanged. */
interface Moved {
  from: Pinned;
  to: Pinned;
  name: string;
  ino: bigint;
  aside?: Replaced;
}

/**
 * A file a merge replaced, set aside in the source folder under a hidden staging name recorded
 * in the staging ledger: the next start removes it if the process dies before the merge is whole.
 */
interface Replaced {
  /** Renames the replaced file (now at the source's place) to the hidden name, if it is the one. */
  hide(): Promise<void>;
  /**
   * Gives the hidden file back its name in the source folder (or the first free `name(N)`), where
   * the exchange had put it; answers that name, or undefined when it was not hidden.
   */
  unhide(): Promise<string | undefined>;
  remove(): Promise<void>;
  /** Nothing was set aside after all. */
  drop(): Promise<void>;
}

async function setAside(access: FileAccess, folder: Pinned, name: string, ino: bigint): Promise<Replaced> {
  const aside = stagingName(name);
  const forget = await access.staging.note(folder, aside);
  let hidden = false;
  return {
    hide: async () => {
      await renameEntry(folder, name, folder, aside);
      if ((await statEntry(folder, aside)).ino === ino) {
        hidden = true;
        return;
      }
      // Something took the place between the exchange and now: it is not what was replaced.
      await renameToFreeName(folder, aside, name);
      await forget();
    },
    unhide: async () => {
      if (!hidden) return undefined;
      const back = await renameToFreeName(folder, aside, name);
      hidden = false;
      await forget();
      return back;
    },
    remove: async () => {
      if (hidden) await unlinkEntry(folder, aside);
      await forget();
    },
    drop: forget,
  };
}

/**
 * Moves an entry a merge moved back, only while it is still the entry moved (same inode): one
 * another user put there since stays where it is, and what the merge replaced stays replaced. An
 * exchanged entry is exchanged again with what it replaced, which thus goes back too.
 */
async function moveBack(m: Moved): Promise<void> {
  const there = await statEntry(m.to, m.name).catch(() => undefined);
  if (there?.ino !== m.ino) {
    await m.aside?.remove();
    return;
  }
  const back = await m.aside?.unhide();
  if (back !== undefined) {
    await exchangeEntries(m.to, m.name, m.from, back);
    return;
  }
  await renameInto(m.to, m.name, m.from, m.name, false);
}

/** Bytes a file's stat says it holds (a link or folder: nothing). */
function bytesOfEntry(st: { isFile(): boolean; size: bigint | number }): number {
  return st.isFile() ? Number(st.size) : 0;
}

/** What landed, measured there: a measure that did not settle refuses the merge (it all goes back). */
async function entryBytes(
  access: FileAccess,
  folder: Pinned,
  name: string,
  st: { isFile(): boolean; isDirectory(): boolean; size: bigint | number },
): Promise<number> {
  const measured = await measureEntry(access, folder, name, {}, st);
  if (!measured.settled) throw unsettledMeasure();
  return measured.bytes;
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
