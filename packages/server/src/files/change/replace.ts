import type fs from 'node:fs';
import { conflict } from '../../errors.js';
import {
  exchangeEntries,
  joinReal,
  renameEntry,
  renameEntryNoReplace,
  statEntry,
  unlinkEntry,
  type Pinned,
} from '../access/anchor.js';
import type { FileAccess, ReplacedItem } from '../access/access.js';
import { identity } from '../access/identity.js';
import type { QuotaHold } from './quota-hold.js';
import type { Opened } from '../access/resolver.js';

/**
 * How a finished file takes its place (a save, an upload, a WebDAV PUT, a tus completion): one
 * rename over the destination, and the quota counts what that rename really replaced.
 *
 * A replacing write counts the file it replaces as room. Measured when the request came, that
 * room is a guess: the file can be moved away (or another put there) while the new one is
 * written, and the ledger would record a change that never happened (two files on the disk, one
 * counted). So the destination is measured again at the rename, and the rename itself says what
 * it replaced: over a free name it is `RENAME_NOREPLACE` (it fails if anything appeared), over an
 * entry it is `RENAME_EXCHANGE`, after which the staging name holds exactly what stood at the
 * destination at that moment. That entry is measured, checked against the quota (a write that no
 * longer fits is exchanged back and refused, the destination as it was) and only then removed.
 */

/** Tries before a destination that keeps changing under the write is given up with 409. */
const ATTEMPTS = 8;

/** Writes to one destination in this process, one after the other (see `replaceCounted`). */
const turns = new Map<string, Promise<unknown>>();

/** Bytes an entry gives back when a rename replaces it: a regular file's size, else nothing. */
function roomOf(st: fs.BigIntStats | undefined): number {
  return st?.isFile() ? Number(st.size) : 0;
}

function isCode(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException).code === code;
}

const absent = (err: unknown) => {
  if (isCode(err, 'ENOENT')) return undefined;
  throw err;
};

/**
 * Renames `fromName` of `from` (a finished file of `size` bytes) over `toName` of `to` and commits
 * to `hold` the bytes that really changed: `size` less what the rename replaced. Refused with 507
 * (`hold.need`) when it does not fit beside what the destination holds at that moment, and with
 * 409 when a folder stands there; either way the destination is left as it was and the caller
 * removes its staging file. `beforeRename` runs between the last check and the rename (tests);
 * `replacedItem` hears of a file replaced, and of the new one (their identities).
 * Unless `replace` (the caller saw an entry there and may replace it), the name must be free:
 * anything that took it since is left as it is, with 409.
 *
 * Two writes to the same destination in this server take turns, so that one's exchange is never
 * undone into the other's. Without the native addon (or on a file system without the rename
 * flags) a free name is still taken with a hard link, which never replaces; over an existing
 * entry the rename is plain and counts what stood there just before it (docs/security.md).
 */
export async function replaceCounted(
  hold: QuotaHold,
  from: Pinned,
  fromName: string,
  to: Pinned,
  toName: string,
  size: number,
  replace: boolean,
  beforeRename?: () => Promise<void> | void,
  replacedItem?: ReplacedItem,
): Promise<void> {
  const key = `${to.stat.dev}:${to.stat.ino}/${toName}`;
  const before = turns.get(key) ?? Promise.resolve();
  const mine = before
    .catch(() => undefined)
    .then(() => replaceOnce(hold, from, fromName, to, toName, size, replace, beforeRename, replacedItem));
  turns.set(key, mine);
  try {
    return await mine;
  } finally {
    if (turns.get(key) === mine) turns.delete(key);
  }
}

async function replaceOnce(
  hold: QuotaHold,
  from: Pinned,
  fromName: string,
  to: Pinned,
  toName: string,
  size: number,
  replace: boolean,
  beforeRename?: () => Promise<void> | void,
  replacedItem?: ReplacedItem,
): Promise<void> {
  const taken = () => conflict('a file with this name was created meanwhile: nothing was replaced');
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const there = await statEntry(to, toName).catch(absent);
    if (there?.isDirectory()) throw conflict('a folder exists at this path');
    if (there && !replace) throw taken();
    await hold.need(size - roomOf(there));
    await beforeRename?.();

    if (!there) {
      let placed: boolean;
      try {
        placed = await renameEntryNoReplace(from, fromName, to, toName);
      } catch (err) {
        if (isCode(err, 'EEXIST')) {
          if (!replace) throw taken();
          continue; // something appeared: measure it
        }
        throw err;
      }
      if (!placed) await renameEntry(from, fromName, to, toName);
      await hold.commit(size);
      return;
    }

    const ours = await statEntry(from, fromName);
    let exchanged: boolean;
    try {
      exchanged = await exchangeEntries(from, fromName, to, toName);
    } catch (err) {
      if (isCode(err, 'ENOENT')) continue; // it went away: measure again
      throw err;
    }
    if (!exchanged) {
      await renameEntry(from, fromName, to, toName);
      await hold.commit(size - roomOf(there));
      await replacedItem?.(identity(there), identity(ours), joinReal(await to.currentReal(), toName));
      return;
    }
    // `fromName` now names what stood at the destination when the new file took its place.
    const replaced = await statEntry(from, fromName);
    let refusal: unknown;
    if (replaced.isDirectory()) refusal = conflict('a folder exists at this path');
    else {
      try {
        await hold.need(size - roomOf(replaced));
      } catch (err) {
        refusal = err;
      }
    }
    if (refusal !== undefined) {
      // Back as it was while the destination still holds the new file; a folder always goes back.
      const now = await statEntry(to, toName).catch(absent);
      if (replaced.isDirectory() || (now && now.ino === ours.ino && now.dev === ours.dev)) {
        await exchangeEntries(from, fromName, to, toName);
        throw refusal;
      }
      // The new file was renamed on in these microseconds (by a move of the user's): what it
      // replaced is still measured exactly and counted below, so the quota refuses what follows.
    }
    await hold.commit(size - roomOf(replaced));
    await replacedItem?.(identity(replaced), identity(ours), joinReal(await to.currentReal(), toName));
    await unlinkEntry(from, fromName);
    return;
  }
  throw conflict('the destination kept changing while the file was put in place; try again');
}

/**
 * What an operation does to an existing entry at its destination:
 * - `merge`: File Browser's `override` (the web API's copies and moves). A folder onto a folder
 *   is merged into it, a file replaces a file, and a change of kind (a file onto a folder, or
 *   the reverse) is a conflict: nothing is deleted.
 * - `replace`: WebDAV's `Overwrite: T` and a restore's `override`. The entry gives way whole.
 */
export type ReplaceMode = 'merge' | 'replace';

/**
 * How an existing entry gives way, decided and checked before anything changes:
 * - `modify`: a regular file replaced by a file. Its bytes change, as with PUT: the write itself
 *   replaces it in one rename (`modify` permission).
 * - `merge`: a folder merged into (`modify`, for the files the merge replaces).
 * - `delete`: anything else (a folder, a link, a file replaced by a folder). The entry goes
 *   through the one delete, `deleteOrTrash`, into the trash while it is on, with the `delete`
 *   permission (policy operation `replace`) and the rules checked on everything inside it.
 */
export interface Replacement {
  readonly kind: 'modify' | 'merge' | 'delete';
  /** Bytes its removal gives back to the quotas (a delete for good), known before it happens. */
  readonly freed: number;
  /**
   * Removes the entry when its kind says so (else nothing). The caller calls it once every
   * check of its operation passed (quota included), just before writing, and opens the
   * destination again afterwards: what it had open there is gone.
   */
  apply(): Promise<void>;
}

/** The one way an existing entry gives way to another, for every route that replaces. */
export interface ReplaceStep {
  /**
   * Checks what replacing `dst` (an existing entry) with an entry of the given kind takes: 403
   * without the permissions or when a rule refuses something inside it, 409 for a change of
   * kind in `merge` mode, 423 when a lock covers it. Changes nothing.
   */
  plan(access: FileAccess, dst: Opened, incomingIsDir: boolean, mode: ReplaceMode): Promise<Replacement>;
}
