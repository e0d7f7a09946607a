/**
 * Name clashes between what is being uploaded and what the destination folder already holds,
 * and the targets each entry gets once the user chose to replace or to keep both.
 */
import { topLevelName } from '../../utils/clash';
import type { UploadEntry } from './entries';

/** An entry of the destination folder (its listing items carry more; only these matter). */
export interface ExistingItem {
  name: string;
  isDir: boolean;
}

/**
 * What exists inside the destination's folders that incoming folders merge into: paths relative
 * to the destination ("photos/2024/a.jpg") → whether each is a folder.
 */
export type ExistingTree = ReadonlyMap<string, boolean>;

/** A top-level name that is taken in the destination. */
export interface Clash {
  name: string;
  /**
   * A file would land where a folder is, or the other way round: replacing cannot merge them,
   * so such an entry always goes under a free name.
   */
  kindMismatch: boolean;
}

export type ClashChoice = 'replace' | 'keep';

/** Where one entry goes, relative to the destination, and whether it may overwrite a file. */
export interface UploadTarget {
  entry: UploadEntry;
  relativePath: string;
  override: boolean;
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot);
}

/**
 * The server's auto-naming (resources PATCH with rename=true), so "keep both" names things the way
 * a copy into the same folder does: `a.txt` → `a(1).txt`, `a.tar.gz` → `a.tar(1).gz`,
 * `.env` → `(1).env`, `dir` → `dir(1)`.
 */
export function numberedName(name: string, n: number): string {
  const ext = extensionOf(name);
  return `${name.slice(0, name.length - ext.length)}(${n})${ext}`;
}

/** The first `name(N)` not in `taken`. */
export function freeName(name: string, taken: ReadonlySet<string>): string {
  for (let n = 1; ; n++) {
    const candidate = numberedName(name, n);
    if (!taken.has(candidate)) return candidate;
  }
}

/** Entries grouped by top-level name, in the order they came. */
function groupByTopLevel(entries: readonly UploadEntry[]): Map<string, UploadEntry[]> {
  const groups = new Map<string, UploadEntry[]>();
  for (const entry of entries) {
    const name = topLevelName(entry.relativePath);
    if (!name) continue;
    const group = groups.get(name);
    if (group) group.push(entry);
    else groups.set(name, [entry]);
  }
  return groups;
}

/** An incoming top-level entry is a folder when something lies beneath it or it is a folder entry. */
function isFolderGroup(name: string, group: readonly UploadEntry[]): boolean {
  return group.some((entry) => entry.relativePath !== name || !entry.file);
}

/**
 * The incoming folders that merge into folders of the same name at the destination: their trees
 * must be listed (recursively) to know whether any file inside would be overwritten.
 */
export function foldersToInspect(
  entries: readonly UploadEntry[],
  existing: readonly ExistingItem[],
): string[] {
  const folders = new Set(existing.filter((item) => item.isDir).map((item) => item.name));
  return [...groupByTopLevel(entries)]
    .filter(([name, group]) => folders.has(name) && isFolderGroup(name, group))
    .map(([name]) => name);
}

/**
 * Compares the incoming entries by their first path segment with the destination's items. A
 * file clashes with anything of its name; a folder clashes with a file of its name, and with a
 * folder of its name only when the merge would overwrite or collide with something inside
 * (known from `tree`, the recursive listing of those folders) — adding new files to an
 * existing folder loses nothing, so it is not worth a question.
 */
export function findClashes(
  entries: readonly UploadEntry[],
  existing: readonly ExistingItem[],
  tree: ExistingTree = new Map(),
): Clash[] {
  const byName = new Map(existing.map((item) => [item.name, item]));
  const clashes: Clash[] = [];
  for (const [name, group] of groupByTopLevel(entries)) {
    const there = byName.get(name);
    if (!there) continue;
    const incomingFolder = isFolderGroup(name, group);
    if (there.isDir !== incomingFolder) {
      clashes.push({ name, kindMismatch: true });
      continue;
    }
    if (!incomingFolder) {
      clashes.push({ name, kindMismatch: false });
      continue;
    }
    let overwrites = false;
    let mismatch = false;
    for (const entry of group) {
      const segments = entry.relativePath.split('/');
      // A file where the upload needs a folder on the way down.
      for (let i = 1; i < segments.length - 1; i++) {
        if (tree.get(segments.slice(0, i + 1).join('/')) === false) mismatch = true;
      }
      const kind = tree.get(entry.relativePath);
      if (kind === undefined) continue;
      if (entry.file && kind === false) overwrites = true;
      else if (entry.file ? kind : !kind) mismatch = true;
    }
    if (mismatch || overwrites) clashes.push({ name, kindMismatch: mismatch });
  }
  return clashes;
}

/**
 * The target of every entry once the user chose. Replace: clashing entries overwrite (folders
 * merge). Keep both: each clashing top-level entry goes under the first free `name(N)`, so the
 * existing one stays as it is. Entries that did not clash never overwrite, so a file that
 * appeared meanwhile is refused by the server rather than silently replaced.
 */
export function planTargets(
  entries: readonly UploadEntry[],
  clashes: readonly Clash[],
  choice: ClashChoice,
  existing: readonly ExistingItem[],
): UploadTarget[] {
  const taken = new Set<string>([
    ...existing.map((item) => item.name),
    ...entries.map((entry) => topLevelName(entry.relativePath)),
  ]);
  const renamed = new Map<string, string>();
  const overwriting = new Set<string>();
  for (const clash of clashes) {
    if (choice === 'keep' || clash.kindMismatch) {
      const name = freeName(clash.name, taken);
      taken.add(name);
      renamed.set(clash.name, name);
    } else {
      overwriting.add(clash.name);
    }
  }
  return entries.map((entry) => {
    const top = topLevelName(entry.relativePath);
    const rename = renamed.get(top);
    return {
      entry,
      relativePath: rename
        ? rename + entry.relativePath.replace(/^\/+/, '').slice(top.length)
        : entry.relativePath,
      override: overwriting.has(top),
    };
  });
}

/** Turns a recursive listing of the destination's folders into paths relative to the destination. */
export function treeFromListing(
  destination: string,
  entries: readonly { path: string; isDir: boolean }[],
): Map<string, boolean> {
  const base = destination.replace(/\/+$/, '');
  const tree = new Map<string, boolean>();
  for (const entry of entries) {
    const path = entry.path.replace(/\\/g, '/');
    const relative = path.startsWith(`${base}/`) ? path.slice(base.length + 1) : path.replace(/^\/+/, '');
    if (relative) tree.set(relative.replace(/\/+$/, ''), entry.isDir);
  }
  return tree;
}
