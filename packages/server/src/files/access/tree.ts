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
   * Told (`seen`) when the walk may have missed or twice counted something, as far as a walk can
   * see: a folder whose entries changed at `since` (ms) or later, by its ctime read once its names
   * were read, or a name it listed gone when looked up; and a folder it could not read (its
   * entries are not known). An entry moved from where the walk had not been to where it had been
   * changes the folder it left: a walk that missed it knows. A folder that changed is listed again
   * as the walk leaves it, and the names new since are walked: an entry renamed within its folder
   * while the walk was there is not missed.
   */
  changes?: { since: number; seen(): void };
}

/** A file system's refusal (ENOENT, EACCES, …): anything else (a bug, no descriptors left) is not one. */
function isRefusal(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && code !== 'EMFILE' && code !== 'ENFILE' && code !== 'ENOMEM';
}

/** What an entry is: a folder, a file, a link, something else; undefined where a listing does not say. */
type Kind = 'dir' | 'file' | 'link' | 'other' | undefined;

function kindOf(st: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): Kind {
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  if (st.isSymbolicLink()) return 'link';
  return 'other';
}

/** The kind a listing gives an entry; undefined where the file system does not say (DT_UNKNOWN). */
function listedKind(d: fs.Dirent): Kind {
  if (d.isBlockDevice() || d.isCharacterDevice() || d.isFIFO() || d.isSocket()) return 'other';
  const kind = kindOf(d);
  return kind === 'other' ? undefined : kind;
}

/**
 * The entries of a pinned folder with the kind its listing gives (staging files of writes in
 * progress left out unless `staging`). An unreadable folder has none (`refused` is told); a
 * failure that is not the file system's refusal is thrown, never taken for an empty folder.
 */
async function entriesOf(
  folder: Pinned,
  staging = false,
  refused?: () => void,
): Promise<Array<{ name: string; kind: Kind }>> {
  try {
    return (await readFolderTypes(folder))
      .filter((d) => staging || !isStagingName(d.name))
      .map((d) => ({ name: d.name, kind: listedKind(d) }));
  } catch (err) {
    if (!isRefusal(err)) throw err;
    refused?.();
    return [];
  }
}

/** The names in a pinned folder (staging files of writes in progress left out). */
async function namesOf(folder: Pinned): Promise<string[]> {
  return (await entriesOf(folder)).map((e) => e.name);
}

/** A folder being walked: what it lists, how far the walk is, and how to let it go. */
interface Frame {
  folder: Pinned;
  virtual: string;
  entries: Array<{ name: string; kind: Kind }>;
  next: number;
  key: string;
  done: () => Promise<void>;
  /** Times it was listed again as the walk left it (see `WalkOptions.changes`). */
  relisted: number;
}

/** Times a folder that changed under a walk is listed again as the walk leaves it. */
const RELISTS = 3;

/**
 * Every descendant of a pinned folder, parents before children, folders entered while the entry
 * is handled. With `follow`, links inside the scope are resolved through the access (escaping and
 * dangling ones skipped) and cycles are cut. The walk keeps its own stack, not the call stack's:
 * a tree thousands of folders deep is walked whole (each level holds one descriptor).
 */
export async function* walkTree(
  access: AccessView,
  folder: Pinned,
  virtual: string,
  opts: WalkOptions,
  seen: Set<string> = new Set(),
): AsyncGenerator<TreeEntry> {
  const stack: Frame[] = [];
  /** Enters a folder (false: a cycle, let go at once). */
  const enter = async (dir: Pinned, dirVirtual: string, done: () => Promise<void>): Promise<boolean> => {
    const key = `${dir.stat.dev}:${dir.stat.ino}`;
    if (opts.follow && seen.has(key)) {
      await done();
      return false;
    }
    if (opts.follow) seen.add(key);
    stack.push({ folder: dir, virtual: dirVirtual, entries: [], next: 0, key, done, relisted: 0 });
    stack.at(-1)!.entries = await entriesOf(dir, opts.staging, opts.changes?.seen);
    if (opts.changes) await noteChanges(dir, opts.changes);
    return true;
  };
  /**
   * Leaves the innermost folder, checked once more for what changed in it while its children
   * were walked; one that changed is listed again first, and stays while it lists new names.
   */
  const leave = async () => {
    const frame = stack.at(-1)!;
    if (opts.changes && (await noteChanges(frame.folder, opts.changes)) && frame.relisted < RELISTS) {
      frame.relisted++;
      const known = new Set(frame.entries.map((e) => e.name));
      const added = (await entriesOf(frame.folder, opts.staging, opts.changes.seen)).filter(
        (e) => !known.has(e.name),
      );
      if (added.length > 0) {
        frame.next = frame.entries.length;
        frame.entries.push(...added);
        return;
      }
    }
    // Failing before this, the frame is let go with the others (below).
    stack.pop();
    if (opts.follow) seen.delete(frame.key);
    await frame.done();
  };
  try {
    // The caller's folder is the caller's to close.
    await enter(folder, virtual, () => Promise.resolve());
    while (stack.length > 0) {
      if (opts.signal?.aborted) return;
      const top = stack.at(-1)!;
      const listed = top.entries[top.next++];
      if (!listed) {
        await leave();
        continue;
      }
      const childVirtual = joinVirtual(top.virtual, listed.name);
      const child = await top.folder.lookup(listed.name).catch((err: unknown) => {
        if (isRefusal(err)) return undefined;
        throw err;
      });
      if (!child) {
        opts.changes?.seen();
        continue;
      }
      // Listed as one kind, found as another: replaced since the listing (a folder swapped for a file).
      if (listed.kind !== undefined && listed.kind !== kindOf(child.stat)) opts.changes?.seen();
      if (child.stat.isSymbolicLink() && opts.follow) {
        await child.close();
        const target = await followedLink(access, childVirtual, opts);
        if (!target) continue;
        let owned = true;
        try {
          yield target.entry;
          if (target.entry.stat.isDirectory()) {
            owned = false;
            await enter(target.opened.node!, childVirtual, () => target.opened.close());
          }
        } finally {
          if (owned) await target.opened.close();
        }
        continue;
      }
      const entry: TreeEntry = {
        virtual: childVirtual,
        real: child.real,
        stat: child.stat,
        folder: top.folder,
        name: listed.name,
      };
      let owned = true;
      try {
        if (opts.include && !opts.include(entry)) continue;
        yield entry;
        if (child.stat.isDirectory()) {
          owned = false;
          await enter(child, childVirtual, () => child.close());
        }
      } finally {
        if (owned) await child.close();
      }
    }
  } finally {
    // Stopped early (the caller went away, a failure): every folder still held is let go.
    while (stack.length > 0) {
      const frame = stack.pop()!;
      if (opts.follow) seen.delete(frame.key);
      await frame.done().catch(() => undefined);
    }
  }
}

/**
 * Tells `changes` when a folder's entries changed since it was asked (or it cannot be looked at);
 * answers whether they did.
 */
async function noteChanges(folder: Pinned, changes: { since: number; seen(): void }): Promise<boolean> {
  const now = await folder.statNow().catch(() => undefined);
  const changed = !now || now.ctimeMs >= changes.since;
  if (changed) changes.seen();
  return changed;
}

/**
 * A link met by a following walk: what it leads to, as an entry, and its opening (which the
 * caller closes; a folder's is walked into), or undefined for an escaping, dangling or refused one.
 */
async function followedLink(
  access: AccessView,
  virtual: string,
  opts: WalkOptions,
): Promise<{ entry: TreeEntry; opened: Opened } | undefined> {
  let target: Opened;
  try {
    target = await access.open(virtual, { rules: false });
  } catch {
    return undefined; // escaping or unreadable
  }
  if (!target.stat || !target.node || !target.folder) {
    await target.close();
    return undefined; // dangling, or the scope itself
  }
  const entry: TreeEntry = {
    virtual,
    real: target.real,
    stat: target.stat,
    folder: target.folder,
    name: target.leaf,
  };
  if (opts.include && !opts.include(entry)) {
    await target.close();
    return undefined;
  }
  return { entry, opened: target };
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
 * not followed, folders failing the rules pruned, stopping when `signal` aborts. Its own stack,
 * as `walkTree`'s: a tree thousands of folders deep is listed whole, one descriptor per level.
 */
export async function* recursiveEntries(
  access: AccessView,
  folder: Pinned,
  virtual: string,
  signal?: AbortSignal,
): AsyncGenerator<RecursiveEntry> {
  const stack: Array<{ folder: Pinned; virtual: string; names: string[]; next: number }> = [
    { folder, virtual, names: await namesOf(folder), next: 0 },
  ];
  try {
    while (stack.length > 0) {
      if (signal?.aborted) return;
      const top = stack.at(-1)!;
      const name = top.names[top.next++];
      if (name === undefined) {
        const done = stack.pop()!;
        // The caller's folder is the caller's to close.
        if (stack.length > 0) await done.folder.close();
        continue;
      }
      const childVirtual = joinVirtual(top.virtual, name);
      if (!access.check(childVirtual)) continue;
      const st = await statEntry(top.folder, name).catch(() => undefined);
      if (!st) continue;
      const isDir = st.isDirectory();
      yield { path: childVirtual, name, size: Number(st.size), modified: goTime(st.mtimeNs), isDir };
      if (!isDir) continue;
      const child = await top.folder.lookup(name).catch(() => undefined);
      if (!child) continue;
      // Swapped for something else since the stat: not walked.
      if (!child.stat.isDirectory()) await child.close();
      else {
        stack.push({ folder: child, virtual: childVirtual, names: [], next: 0 });
        stack.at(-1)!.names = await namesOf(child);
      }
    }
  } finally {
    for (const frame of stack.slice(1)) await frame.folder.close().catch(() => undefined);
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
