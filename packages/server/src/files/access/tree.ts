import type fs from 'node:fs';
import type { RecursiveEntry } from '@filebrowser/contract';
import type { AccessView } from './access-view.js';
import { readFolderTypes, removeEntryFolder, statEntry, unlinkEntry, type Pinned } from './anchor.js';
import { goTime } from '../listing/go-format.js';
import { isStagingName } from './staging-names.js';
import { joinVirtual, type Opened } from './resolver.js';

/**
 * Walks over trees of pinned folders. Each folder is opened relative to the folder above it
 * without following links, and held only while the walk is inside it, so a walk keeps as many
 * descriptors open as the tree is deep and never strays through a folder swapped for a link.
 */

/** One entry met by a walk: where it is (its pinned folder and name) and what it is. */
export interface TreeEntry {
  virtual: string;
  real: string;
  stat: fs.Stats;
  /** The folder holding it, open while the entry is being handled (until the walk moves on). */
  folder: Pinned;
  /** Its name in `folder`. */
  name: string;
}

export interface WalkOptions {
  /** Follow links inside the scope (copy, archives); off, links are entries like files (delete, move). */
  follow: boolean;
  signal?: AbortSignal;
  /** Entries for which this is false are skipped, and a refused folder is pruned with its contents. */
  include?: (e: TreeEntry) => boolean;
  /**
   * Staging names too (left out by default: writes in progress). What a scope holds counts them:
   * a program can make a file under such a name, and it must not be free room.
   */
  staging?: boolean;
  /**
   * Told (`seen`) when the tree changed while it was walked, as far as a walk can see: a folder
   * whose entries changed at `since` (ms) or later, by its ctime read once its names were read, or
   * a name it listed gone when looked up. An entry moved from where the walk had not been to where
   * it had been changes the folder it left: a walk that missed it knows.
   */
  changes?: { since: number; seen(): void };
}

/** The names in a pinned folder (staging files of writes in progress left out unless `staging`); an unreadable folder has none. */
async function namesOf(folder: Pinned, staging = false): Promise<string[]> {
  try {
    return (await readFolderTypes(folder))
      .map((d) => d.name)
      .filter((name) => staging || !isStagingName(name));
  } catch {
    return [];
  }
}

/**
 * Every descendant of a pinned folder, parents before children, folders entered while the entry
 * is handled. With `follow`, links inside the scope are resolved through the access (escaping and
 * dangling ones skipped) and cycles are cut.
 */
export async function* walkTree(
  access: AccessView,
  folder: Pinned,
  virtual: string,
  opts: WalkOptions,
  seen: Set<string> = new Set(),
): AsyncGenerator<TreeEntry> {
  const key = `${folder.stat.dev}:${folder.stat.ino}`;
  if (opts.follow) {
    if (seen.has(key)) return;
    seen.add(key);
  }
  try {
    const names = await namesOf(folder, opts.staging);
    if (opts.changes) await noteChanges(folder, opts.changes);
    for (const name of names) {
      if (opts.signal?.aborted) return;
      const childVirtual = joinVirtual(virtual, name);
      const child = await folder.lookup(name).catch(() => undefined);
      if (!child) {
        opts.changes?.seen();
        continue;
      }
      try {
        if (child.stat.isSymbolicLink() && opts.follow) {
          yield* followedLink(access, childVirtual, opts, seen);
          continue;
        }
        const entry: TreeEntry = { virtual: childVirtual, real: child.real, stat: child.stat, folder, name };
        if (opts.include && !opts.include(entry)) continue;
        yield entry;
        if (child.stat.isDirectory()) yield* walkTree(access, child, childVirtual, opts, seen);
      } finally {
        await child.close();
      }
    }
  } finally {
    if (opts.follow) seen.delete(key);
  }
}

/** Tells `changes` when a folder's entries changed since it was asked (or it cannot be looked at). */
async function noteChanges(folder: Pinned, changes: { since: number; seen(): void }): Promise<void> {
  const now = await folder.statNow().catch(() => undefined);
  if (!now || now.ctimeMs >= changes.since) changes.seen();
}

/** A link met by a following walk: what it leads to, as an entry (and its tree for a folder). */
async function* followedLink(
  access: AccessView,
  virtual: string,
  opts: WalkOptions,
  seen: Set<string>,
): AsyncGenerator<TreeEntry> {
  let target: Opened;
  try {
    target = await access.open(virtual, { rules: false });
  } catch {
    return; // escaping or unreadable
  }
  try {
    if (!target.stat || !target.node || !target.folder) return; // dangling, or the scope itself
    const entry: TreeEntry = {
      virtual,
      real: target.real,
      stat: target.stat,
      folder: target.folder,
      name: target.leaf,
    };
    if (opts.include && !opts.include(entry)) return;
    yield entry;
    if (target.stat.isDirectory()) yield* walkTree(access, target.node, virtual, opts, seen);
  } finally {
    await target.close();
  }
}

/**
 * Removes the entry `name` of a pinned folder and, for a folder, everything below it, bottom up.
 * Folders are entered through descriptors, so a folder swapped for a link meanwhile makes the
 * removal fail (ENOTDIR) instead of reaching through the link.
 */
export async function removeTree(folder: Pinned, name: string): Promise<void> {
  const node = await folder.lookup(name);
  if (!node) return;
  try {
    if (!node.stat.isDirectory()) {
      await unlinkEntry(folder, name);
      return;
    }
    for (const child of (await readFolderTypes(node)).map((d) => d.name)) await removeTree(node, child);
  } finally {
    await node.close();
  }
  await removeEntryFolder(folder, name);
}

/**
 * GET /api/resources/recursive (contract 5.7): every visible entry below a pinned folder, links
 * not followed, folders failing the rules pruned, stopping when `signal` aborts.
 */
export async function* recursiveEntries(
  access: AccessView,
  folder: Pinned,
  virtual: string,
  signal?: AbortSignal,
): AsyncGenerator<RecursiveEntry> {
  for (const name of await namesOf(folder)) {
    if (signal?.aborted) return;
    const childVirtual = joinVirtual(virtual, name);
    if (!access.check(childVirtual)) continue;
    let st: fs.BigIntStats;
    try {
      st = await statEntry(folder, name);
    } catch {
      continue;
    }
    const isDir = st.isDirectory();
    yield { path: childVirtual, name, size: Number(st.size), modified: goTime(st.mtimeNs), isDir };
    if (!isDir) continue;
    const child = await folder.lookup(name).catch(() => undefined);
    if (!child) continue;
    try {
      // Swapped for something else since the stat: not walked.
      if (child.stat.isDirectory()) yield* recursiveEntries(access, child, childVirtual, signal);
    } finally {
      await child.close();
    }
  }
}

/** What a selection holds, counted ahead of long work so that its progress can be told. */
export interface Measure {
  bytes: number;
  items: number;
  /** The count stopped at the bound: the totals are lower bounds. */
  partial: boolean;
}

/** Entries a measure counts at most: a bounded walk, so that counting never costs more than the work. */
export const MEASURE_LIMIT = 200_000;

/**
 * Bytes of files and number of entries of an opened entry and (a folder) its tree, walked as the
 * work will walk it (`follow` as the copy or archive does, rules applied through `include`).
 */
export async function measure(
  access: AccessView,
  r: Opened,
  opts: WalkOptions,
  into: Measure = { bytes: 0, items: 0, partial: false },
): Promise<Measure> {
  const st = opts.follow ? r.stat : r.linkStat;
  if (!st) return into;
  into.items++;
  if (st.isFile()) into.bytes += st.size;
  if (!st.isDirectory() || !r.node || (!opts.follow && st.isSymbolicLink())) return into;
  for await (const e of walkTree(access, r.node, r.virtual, opts)) {
    if (into.items >= MEASURE_LIMIT) {
      into.partial = true;
      break;
    }
    into.items++;
    if (e.stat.isFile()) into.bytes += e.stat.size;
  }
  return into;
}
