import type fs from 'node:fs';
import {
  closeAll,
  readEntryLink,
  readFolder,
  removeEntryFolder,
  renameEntry,
  statEntry,
  unlinkEntry,
  type Pinned,
} from '../access/anchor.js';
import { stagingName } from '../access/staging-names.js';
import { renameToFreeName } from './numbered-name.js';

/**
 * The end of a move across file systems (files/change/moves.ts): the source, hidden under a
 * staging name once its copy took the destination's name, goes as far as the copy took it, and no
 * further. A copy reads each folder when it enters it and each file when it reaches it; what
 * anyone put into the source after that, or changed in it, is not in the copy, and must not be
 * removed with the source.
 */

/** Says whether the copy took an entry of the hidden source (`rel`: its names below the top) as it now is. */
export type TakenTest = (
  rel: readonly string[],
  st: fs.BigIntStats,
  folder: Pinned,
  name: string,
) => Promise<boolean>;

/** What a copy took, entry by entry, as it was when the copy read it: the live `TakenTest`. */
export class TakenEntries {
  private readonly seen = new Map<string, string>();

  /** The copy is about to read this entry (a file's open handle, a link's lstat). */
  note(rel: readonly string[], st: fs.BigIntStats): void {
    this.seen.set(rel.join('/'), sameness(st));
  }

  readonly test: TakenTest = async (rel, st) => this.seen.get(rel.join('/')) === sameness(st);
}

/**
 * The same object, unchanged: its inode (a file replaced by a rename is another one), its size and
 * its modification time (a file written in place keeps its inode).
 */
function sameness(st: fs.BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}`;
}

/**
 * The `TakenTest` of a move whose process died after its copy was whole, when nothing remembers
 * what the copy read: an entry is taken when the destination holds it as it is, a file of the
 * same size and modification time (a move keeps it, within a millisecond), a link to the same
 * target. Anything else is given back: a copy changed since comes back twice, nothing is lost.
 */
export function takenAsAtDestination(destFolder: Pinned, destName: string): TakenTest {
  return async (rel, st, folder, name) => {
    const held: Pinned[] = [];
    try {
      const segments = [destName, ...rel];
      let at = destFolder;
      for (const segment of segments.slice(0, -1)) {
        const next = await at.lookup(segment);
        if (!next) return false;
        held.push(next);
        if (!next.stat.isDirectory()) return false;
        at = next;
      }
      const leaf = segments.at(-1)!;
      const there = await statEntry(at, leaf).catch(() => undefined);
      if (!there) return false;
      if (st.isFile()) {
        return there.isFile() && there.size === st.size && within(there.mtimeNs - st.mtimeNs, MS);
      }
      if (st.isSymbolicLink()) {
        return (
          there.isSymbolicLink() && (await readEntryLink(at, leaf)) === (await readEntryLink(folder, name))
        );
      }
      return false;
    } finally {
      await closeAll(new Set(held));
    }
  };
}

const MS = 1_000_000n;
const within = (d: bigint, limit: bigint) => (d < 0n ? -d : d) < limit;

/**
 * Removes the hidden source `hiddenName` of `folder` as far as `taken` says the copy took it: a
 * file or link only while it is the one copied, a folder only once empty. What stays (put into
 * the source or changed while it was copied, a special file no copy can make) gets the source's
 * name back, or the first free `name(N)` when something took that name meanwhile. Answers the
 * name it kept, if any.
 */
export async function settleSource(
  folder: Pinned,
  hiddenName: string,
  name: string,
  taken: TakenTest,
): Promise<string | undefined> {
  const top = await statEntry(folder, hiddenName).catch(() => undefined);
  if (!top) return undefined;
  const gone = top.isDirectory()
    ? await settleFolder(folder, hiddenName, [], taken)
    : await unlinkIfTaken(folder, hiddenName, [], taken);
  if (gone) return undefined;
  return renameToFreeName(folder, hiddenName, name);
}

/** Settles the hidden folder `name` of `parent`; true when it is gone. */
async function settleFolder(
  parent: Pinned,
  name: string,
  rel: readonly string[],
  taken: TakenTest,
): Promise<boolean> {
  const node = await parent.lookup(name);
  if (!node?.stat.isDirectory()) {
    await node?.close();
    return false;
  }
  try {
    for (const child of await readFolder(node)) {
      const st = await statEntry(node, child).catch(() => undefined);
      if (!st) continue;
      const childRel = [...rel, child];
      if (st.isDirectory()) await settleFolder(node, child, childRel, taken);
      else await unlinkIfTaken(node, child, childRel, taken);
    }
  } finally {
    await node.close();
  }
  // Whatever came in meanwhile keeps it (ENOTEMPTY): it stays, with what holds it.
  return removeEntryFolder(parent, name).then(
    () => true,
    () => false,
  );
}

/**
 * Unlinks the entry `name` of `folder` if the copy took it. It is first renamed aside, so that
 * what is checked is what is removed: a write renaming its file onto the name meanwhile keeps it.
 * True when it is gone.
 */
export async function unlinkIfTaken(
  folder: Pinned,
  name: string,
  rel: readonly string[],
  taken: TakenTest,
): Promise<boolean> {
  return unlinkIfSame(folder, name, (st, aside) => taken(rel, st, folder, aside));
}

/**
 * Unlinks the non-folder entry `name` of `folder` when `same` says so of what is there: renamed
 * aside first (one atomic rename), checked there, removed or put back. What a concurrent rename put
 * onto `name` is never the one removed. True when it is gone.
 */
export async function unlinkIfSame(
  folder: Pinned,
  name: string,
  same: (st: fs.BigIntStats, aside: string) => Promise<boolean>,
): Promise<boolean> {
  // A fresh staging name nobody else uses: a plain rename takes it.
  const aside = stagingName(name);
  try {
    await renameEntry(folder, name, folder, aside);
  } catch {
    return false;
  }
  try {
    const st = await statEntry(folder, aside);
    if (!st.isDirectory() && (await same(st, aside))) {
      await unlinkEntry(folder, aside);
      return true;
    }
  } catch (err) {
    await renameToFreeName(folder, aside, name).catch(() => undefined);
    throw err;
  }
  // Not the one: back under its name, or beside it when another took the name meanwhile.
  await renameToFreeName(folder, aside, name);
  return false;
}
