import { setTimeout as sleep } from 'node:timers/promises';
import { conflict, type AppError } from '../../errors.js';
import type { AccessView } from '../access/access-view.js';
import type { Pinned } from '../access/anchor.js';
import { walkTree, type WalkOptions } from '../access/tree.js';

/**
 * How many bytes a tree holds, for quotas. A walk is not a snapshot: an entry renamed or moved
 * while it walks can be missed or met twice, and a folder it cannot read counts nothing. A walk
 * that saw any of that (`WalkOptions.changes`) is made again; a measure none of whose walks was
 * undisturbed is not settled, and its user must not take it for the truth (a move goes back, a
 * delete is refused, a recount never lowers a count with it).
 */

/** Walks of one measure before it is given up as not settled. */
export const WALK_ATTEMPTS = 3;

/** How far a folder's ctime may lag this process's clock (the kernel stamps with a coarse clock). */
export const CLOCK_SLACK_MS = 100;

/** Tests only: runs at each entry a measure's walk meets, with its real path, before the walk goes on. */
export const measureSeam: { step?: (real: string) => Promise<void> | void } = {};

export interface Measured {
  bytes: number;
  /** A walk saw nothing change; otherwise `bytes` is the largest of the disturbed walks. */
  settled: boolean;
}

/** The refusal of what a measure that did not settle would have decided (a move, a delete). */
export function unsettledMeasure(): AppError {
  return conflict(
    'it kept changing while it was measured, or holds a folder the server cannot read: nothing was done, try again',
  );
}

/**
 * Before a walk after a disturbed one: lets changes made before it began fall out of the window in
 * which it takes a folder's ctime for a change (a tree written a moment before is measured calm).
 */
export function pauseBeforeWalk(attempt: number): Promise<void> {
  return attempt === 1 ? Promise.resolve() : sleep(CLOCK_SLACK_MS);
}

/**
 * Bytes of the regular files below a pinned folder (links not followed unless `follow`, then as
 * what they lead to inside the scope), the server's private paths left out. `staging`: files
 * named as writes in progress count too (a move takes them along; a copy leaves them behind).
 */
export async function measureTree(
  access: AccessView,
  folder: Pinned,
  virtual: string,
  opts: { follow: boolean; staging: boolean; attempts?: number; inTrash?: boolean },
): Promise<Measured> {
  let largest = 0;
  // An item in the trash lies below a private path: what it holds is the user's all the same.
  const include = (e: { real: string }) => !!opts.inTrash || !access.isPrivate(e.real);
  const { attempts = WALK_ATTEMPTS, inTrash: _, ...walk } = opts;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    await pauseBeforeWalk(attempt);
    let changed = false;
    const changes: WalkOptions['changes'] = {
      since: Date.now() - CLOCK_SLACK_MS,
      seen: () => (changed = true),
    };
    let bytes = 0;
    for await (const e of walkTree(access, folder, virtual, { ...walk, include, changes })) {
      if (e.stat.isFile()) bytes += e.stat.size;
      await measureSeam.step?.(e.real);
    }
    if (!changed) return { bytes, settled: true };
    largest = Math.max(largest, bytes);
  }
  return { bytes: largest, settled: false };
}

/**
 * The entry `name` of a pinned folder, measured: a folder's tree (links in it not followed,
 * files of writes in progress counted, as a recount counts them); for anything else the size
 * it stands at (the trash records a link so), or, given the caller's `st`, a file's size and
 * nothing for the rest (a merge's count), without a lookup.
 */
export async function measureEntry(
  access: AccessView,
  folder: Pinned,
  name: string,
  opts: { attempts?: number; inTrash?: boolean } = {},
  st?: { isFile(): boolean; isDirectory(): boolean; size: bigint | number },
): Promise<Measured> {
  if (st?.isFile()) return { bytes: Number(st.size), settled: true };
  if (st && !st.isDirectory()) return { bytes: 0, settled: true };
  const node = await folder.lookup(name);
  if (!node) return { bytes: 0, settled: true };
  try {
    if (!node.stat.isDirectory()) return { bytes: node.stat.size, settled: true };
    return await measureTree(access, node, '/' + name, { follow: false, staging: true, ...opts });
  } finally {
    await node.close();
  }
}

/**
 * What an opened path names, measured: a file's size, a folder's tree (see `measureTree`; a
 * move's measure counts staging names, a copy's follows links as the copy makes them).
 * `attempts` 1: one walk, for what only checks ahead (a move's or copy's size before it starts)
 * or gives back (a delete); the count that decides comes from a measure that may settle.
 */
export async function measureOpened(
  access: AccessView,
  r: { node?: Pinned; virtual: string },
  follow: boolean,
  attempts = WALK_ATTEMPTS,
): Promise<Measured> {
  const node = r.node;
  if (!node) return { bytes: 0, settled: true };
  if (node.stat.isFile()) return { bytes: node.stat.size, settled: true };
  if (!node.stat.isDirectory()) return { bytes: 0, settled: true };
  return await measureTree(access, node, r.virtual, { follow, staging: !follow, attempts });
}

/** `measureOpened` in one walk, its bytes only. */
export async function bytesOf(
  access: AccessView,
  r: { node?: Pinned; virtual: string },
  follow: boolean,
): Promise<number> {
  return (await measureOpened(access, r, follow, 1)).bytes;
}
