import crypto from 'node:crypto';
import path from 'node:path';
import type { TrashItem, TrashRestoreResult } from '@filebrowser/contract';
import { assertMay } from '../../auth/policy.js';
import type { AppContext } from '../../context.js';
import { AppError, conflict, forbidden, notFound } from '../../errors.js';
import type { StoredTrashItem } from '../../store/trash.js';
import type { StoredUser } from '../../store/users.js';
import { fileAccessFor, type Confinement, type FileAccess } from '../access/access.js';
import { makeEntryFolder, Pinned } from '../access/anchor.js';
import { assertDeletable, deletePath } from './ops.js';
import { freeDestination, moveEntry } from './transfer.js';
import { placeOf } from './write.js';
import { serverPaths } from '../access/private.js';
import { bytesOf, measureEntry, unsettledMeasure } from './measure.js';
import { joinVirtual, type Opened } from '../access/resolver.js';
import { renameInto } from './rename-into.js';
import { storedOrLater } from '../../store/until-stored.js';
import type { Replacement, ReplaceStep } from './replace.js';
import { removeTree, walkTree } from '../access/tree.js';

/**
 * The trash. A deleted entry is renamed, as it is, into
 * `<trashDir>/<userId>/<itemId>/<name>`: the trash folder is on the served root's file system
 * (files/private.ts), so that is one rename and no byte is copied. Only an entry on another file
 * system (a mount inside the root) is copied then removed, and the answer says so. The trash
 * folder is one of the server's private paths: no listing, search, archive, share or command
 * reaches it; only this module does, by the pinned primitives, from the folder configuration names.
 */

const DAY_MS = 24 * 3600 * 1000;

/** Folders of the trash are the server's own: nobody else on the machine needs to read them. */
const TRASH_DIR_MODE = 0o700;

/** Whether a delete goes to the trash now (the global setting). */
export function trashEnabled(ctx: AppContext): boolean {
  return ctx.store.settings.get().trash.enabled;
}

/** The trash folder, made when missing, pinned; the caller closes it. */
async function trashFolder(ctx: AppContext): Promise<Pinned> {
  const dir = serverPaths(ctx.config).trashDir;
  const parent = await Pinned.folder(path.dirname(dir));
  try {
    return await makeEntryFolder(parent, path.basename(dir), TRASH_DIR_MODE);
  } finally {
    await parent.close();
  }
}

/** Runs `fn` with the pinned folder `<trash>/<segments...>` (made on the way when `make`). */
async function inTrash<T>(
  ctx: AppContext,
  segments: readonly string[],
  make: boolean,
  fn: (folder: Pinned) => Promise<T>,
): Promise<T> {
  const held: Pinned[] = [await trashFolder(ctx)];
  try {
    for (const seg of segments) {
      const here = held[held.length - 1]!;
      const next = make ? await makeEntryFolder(here, seg, TRASH_DIR_MODE) : await here.lookup(seg);
      if (!next?.stat.isDirectory()) {
        await next?.close();
        throw notFound('the item is no longer in the trash folder');
      }
      held.push(next);
    }
    return await fn(held[held.length - 1]!);
  } finally {
    for (const p of held.reverse()) await p.close();
  }
}

function itemSegments(item: Pick<StoredTrashItem, 'location'>): string[] {
  return item.location.split('/');
}

/** A measure in the trash: nobody changes what is there, so one walk is enough (its rename is fresh). */
const IN_TRASH = { inTrash: true, attempts: 1 };

/**
 * Measures again what was deleted from `place` (a place below the root) or below it since `since`:
 * a program that still had a file open when it was deleted (a command writing it) goes on growing
 * it in the trash, where the size recorded at the delete would not count it.
 */
export async function remeasureTrash(
  ctx: AppContext,
  access: FileAccess,
  place: string,
  since: number,
): Promise<void> {
  for (const item of await ctx.store.trash.deletedBelowSince(access.root.id, place, since)) {
    const name = path.posix.basename(item.rootPath);
    const size = await inTrash(ctx, itemSegments(item), false, async (folder) =>
      Math.max(item.size, (await measureEntry(access, folder, name, IN_TRASH)).bytes),
    ).catch(() => undefined);
    if (size !== undefined && size !== item.size) await ctx.store.trash.setSize(item.id, size);
  }
}

export interface Trashed {
  item: StoredTrashItem;
  /** Moved across file systems by copying (no rename possible). */
  copied: boolean;
}

/**
 * DELETE with the trash on: the entry (a link itself, never its target) goes into the deleting
 * user's trash, with the same checks as a permanent delete (descendants must pass the rules).
 */
export async function moveToTrash(
  ctx: AppContext,
  access: FileAccess,
  user: StoredUser,
  r: Opened,
): Promise<Trashed> {
  await assertDeletable(access, r);
  const rootPath = access.rootPathOf(r.entry);
  if (rootPath === undefined) throw forbidden();
  const id = crypto.randomBytes(12).toString('hex');
  const name = r.leaf;
  // Measured before it goes (the record of a copied move is made with the copy, moveEntry), and
  // again once it is in the trash, where nobody changes it: what was written into it while the
  // first measure walked is counted. One that does not settle where a quota counts it (renames
  // under it, a folder the server cannot read) is not deleted: its bytes would leave the count.
  const counted = await access.quota.counts(access, r.entry);
  // Walked until still only where a quota counts it (a walk after a change waits a moment first).
  const before = await measureEntry(access, r.folder!, name, { attempts: counted ? undefined : 1 });
  if (!before.settled && counted) throw unsettledMeasure();
  const size = before.bytes;
  return inTrash(ctx, [String(user.id)], true, async (userFolder) => {
    const folder = await makeEntryFolder(userFolder, id, TRASH_DIR_MODE);
    try {
      const item: StoredTrashItem = {
        id,
        userId: user.id,
        rootId: access.root.id,
        rootPath,
        // Where it was in the user's whole scope (a folder token's view names it inside its folder).
        path: access.scopePathOf(r.virtual),
        size,
        isDir: !!r.linkStat?.isDirectory(),
        deletedBy: user.username,
        deletedAt: Date.now(),
        location: `${user.id}/${id}`,
      };
      let moved: { copied: boolean };
      try {
        // Across file systems the item is on record exactly when its copy is whole, so that
        // a process killed at any point leaves it either in place or in the trash, never lost.
        moved = await moveEntry(access, r.folder!, name, folder, name, {
          alongside: async (tx) => await tx.trash.add(item),
        });
      } catch (err) {
        await removeTree(userFolder, id).catch(() => undefined);
        throw err;
      }
      if (moved.copied) {
        ctx.log.warn(
          { path: r.virtual },
          'the trash is on another file system than this item: it was copied into the trash, then removed',
        );
      } else {
        item.size = Math.max(size, (await measureEntry(access, folder, name, IN_TRASH)).bytes);
        await recordOrPutBack(ctx, item, { folder, name }, { folder: r.folder!, name }, () =>
          removeTree(userFolder, id),
        );
      }
      // The bytes left the tree for the trash, which counts them by its records (files/quota.ts).
      await access.quota.changed(access, r.entry, -item.size);
      return { item, copied: moved.copied };
    } finally {
      await folder.close();
    }
  });
}

/**
 * Records an item renamed into the trash. Not recorded (the database away), it goes back where it
 * was (`putBack` removes what held it) and the delete fails: an item in the trash without a record
 * could never be restored or purged. Its old name taken meanwhile, it stays, recorded once the
 * database is back.
 */
async function recordOrPutBack(
  ctx: AppContext,
  item: StoredTrashItem,
  at: { folder: Pinned; name: string },
  from: { folder: Pinned; name: string },
  putBack: () => Promise<void>,
): Promise<void> {
  try {
    await ctx.store.trash.add(item);
  } catch (err) {
    const back = await renameInto(at.folder, at.name, from.folder, from.name, false).then(
      () => true,
      () => false,
    );
    if (back) await putBack().catch(() => undefined);
    else {
      await storedOrLater(
        ctx.store,
        () => ctx.store.trash.add(item),
        (e) => ctx.log.error({ err: e, item: item.id }, 'a trash item could not be recorded'),
      );
    }
    throw err;
  }
}

/**
 * A delete as the settings want it, for every way in (web API, WebDAV): into the user's trash
 * while the trash is on (answering the item), permanent otherwise (answering undefined).
 */
export async function deleteOrTrash(
  ctx: AppContext,
  access: FileAccess,
  user: StoredUser,
  r: Opened,
): Promise<Trashed | undefined> {
  if (trashEnabled(ctx)) return moveToTrash(ctx, access, user, r);
  await deletePath(access, r);
  return undefined;
}

/**
 * The items of a user's trash a request reaches, each with its path as the request sees it. A
 * request for the whole account reaches every item of the user's (with the path it had when it
 * was deleted). A request confined to one folder (an API token limited to it) reaches only the
 * items deleted from inside that folder, named as in the folder: they are the only ones it could
 * have deleted and the only ones it could put back, since a restore goes through the same
 * confined access. Every trash route finds its items here.
 */
export async function reachableItems(
  ctx: AppContext,
  user: StoredUser & Confinement,
): Promise<{ item: StoredTrashItem; path: string }[]> {
  const items = await ctx.store.trash.list(user.id);
  if (user.confinedTo === undefined) return items.map((item) => ({ item, path: item.path }));
  const access = await fileAccessFor(ctx, user);
  return items.flatMap((item) => {
    const virtual = item.rootId === access.root.id ? access.virtualOfRootPath(item.rootPath) : undefined;
    return virtual === undefined || virtual === '/' ? [] : [{ item, path: virtual }];
  });
}

/** A user's own item in the request's reach; anything else is "not found" (not theirs to learn). */
export async function ownItem(
  ctx: AppContext,
  user: StoredUser & Confinement,
  id: string,
): Promise<StoredTrashItem> {
  const found = (await reachableItems(ctx, user)).find((r) => r.item.id === id);
  if (!found) throw notFound();
  return found.item;
}

/** The API shape of an item, under the path the caller sees it at (`reachableItems`). */
export function presentItem(ctx: AppContext, item: StoredTrashItem, seenAt: string = item.path): TrashItem {
  const days = ctx.store.settings.get().trash.retentionDays;
  const folder = seenAt.slice(0, seenAt.lastIndexOf('/')) || '/';
  return {
    id: item.id,
    userID: item.userId,
    name: path.posix.basename(seenAt),
    path: seenAt,
    folder,
    size: item.size,
    isDir: item.isDir,
    deletedBy: item.deletedBy,
    deletedAt: item.deletedAt,
    expiresAt: days > 0 ? item.deletedAt + days * DAY_MS : 0,
  };
}

/** The entry an overwrite took away: into the acting user's trash while the trash is on. */
export interface Replaced {
  /** Where it was, as the user sees it. */
  virtual: string;
  /** Where it was, really (for the follow-ups of a delete). */
  real: string;
  /** Its trash item; undefined when the trash is off and it was deleted for good. */
  trashed?: Trashed;
}

/**
 * The replace step of one user's request. With `keepFiles`, a file replaced by a file goes
 * through the delete too (a restore, which never loses anything), still with `modify` only.
 * `onReplaced` is told of every entry that went (the caller's follow-ups of a delete).
 */
export function replaceStep(
  ctx: AppContext,
  user: StoredUser,
  opts: { keepFiles?: boolean; onReplaced?: (replaced: Replaced) => Promise<void> | void } = {},
): ReplaceStep {
  return {
    async plan(access, dst, incomingIsDir, mode) {
      if (!dst.linkStat) throw new AppError('internal', 'nothing to replace');
      // A copy reaches a folder through a link to it and merges into it; what gives way whole
      // is the entry itself, a link as a link.
      const existing = mode === 'merge' ? (dst.stat ?? dst.linkStat) : dst.linkStat;
      let kind: Replacement['kind'];
      if (mode === 'merge') {
        if (existing.isDirectory() !== incomingIsDir) {
          throw conflict(
            existing.isDirectory()
              ? 'a folder exists at the destination'
              : 'a file exists at the destination',
          );
        }
        kind = incomingIsDir ? 'merge' : 'modify';
      } else {
        kind = existing.isFile() && !incomingIsDir ? 'modify' : 'delete';
      }
      assertMay(access.perm, kind === 'delete' ? 'replace' : 'modify');
      const removes = kind === 'delete' || (kind === 'modify' && !!opts.keepFiles);
      if (!removes) return { kind, freed: 0, apply: async () => undefined };
      const wasDir = existing.isDirectory();
      let freed = 0;
      const entry = await access.open(dst.virtual, { followFinal: false });
      try {
        // Every refusal its delete would make comes now: rules on what it holds, locks.
        await assertDeletable(access, entry);
        if (!trashEnabled(ctx)) {
          freed = await bytesOf(access, entry.isSymlink ? { virtual: entry.virtual } : entry, false);
        }
      } finally {
        await entry.close();
      }
      return {
        kind,
        freed,
        async apply() {
          const now = await access.open(dst.virtual, { followFinal: false });
          try {
            // Decided for what was there: whatever took its place meanwhile is not deleted.
            if (!now.linkStat || now.linkStat.isDirectory() !== wasDir) {
              throw conflict('the destination changed meanwhile');
            }
            const trashed = await deleteOrTrash(ctx, access, user, now);
            await opts.onReplaced?.({ virtual: now.virtual, real: now.entry, ...(trashed && { trashed }) });
          } finally {
            await now.close();
          }
        },
      };
    },
  };
}

export interface RestoreOptions {
  /** Restore beside an existing entry of that name, as `name(1)` (copy's rename=true). */
  rename: boolean;
  /** Replace the existing entry (see `replaceStep`: modify, and delete unless a file replaces a file). */
  override: boolean;
  /**
   * Told once the entry an override replaces is gone, before the item takes its place: the
   * caller records it as the delete it is (audit, share links, listeners). Not told otherwise.
   */
  onReplaced?: (replaced: Replaced) => Promise<void> | void;
  /** Asked again before the item lands (a copy across file systems can outlast its caller). */
  stillAllowed?: () => Promise<unknown>;
}

export interface Restored extends TrashRestoreResult {
  /** Its real path now (for file events). */
  real: string;
}

/**
 * Puts an item back where it was, through the user's access as it is now: a place now outside
 * the scope or refused by a rule (the item or anything in it) is 403 and the item stays. A name
 * taken there is 409 unless `rename` or `override`; folders missing on the way are made again.
 * What an override replaces is deleted as by the user's own delete: into their trash while the
 * trash is on, so that a restore never loses anything; for good when it is off.
 */
export async function restoreItem(
  ctx: AppContext,
  access: FileAccess,
  user: StoredUser,
  item: StoredTrashItem,
  opts: RestoreOptions,
): Promise<Restored> {
  assertMay(access.perm, 'restore');
  if (opts.override) assertMay(access.perm, 'modify');
  if (item.rootId !== access.root.id) throw forbidden('the original place is not in your scope');
  const virtual = access.virtualOfRootPath(item.rootPath);
  if (virtual === undefined || virtual === '/') throw forbidden('the original place is not in your scope');
  const name = path.posix.basename(item.rootPath);
  const target = await access.open(virtual, { followFinal: false });
  let dst = target;
  try {
    if (target.linkStat && !opts.rename && !opts.override) {
      const folder = virtual.slice(0, virtual.lastIndexOf('/')) || '/';
      throw conflict(
        `${name} already exists in ${folder}: keep both (rename=true) or replace it (override=true)`,
      );
    }
    if (target.linkStat && opts.rename) dst = await freeDestination(access, target);
    const recreatedFolders = dst.missing.length > 1;
    // What an override replaces goes through the one delete, even a file: a restore never loses anything.
    const replacement =
      dst.linkStat && opts.override
        ? await replaceStep(ctx, user, { keepFiles: true, onReplaced: opts.onReplaced }).plan(
            access,
            dst,
            item.isDir,
            'replace',
          )
        : undefined;
    await access.locks.assertWritable(access, dst, { deep: true, member: true });
    return await inTrash(ctx, itemSegments(item), false, async (folder) => {
      // Every refusal comes before anything changes: the item stays, the existing entry too.
      // At its original place too: restored under another name, what a rule hides there would show.
      for (const place of dst === target ? [dst] : [target, dst]) {
        await assertRulesAllow(access, folder, name, place.virtual, place.real);
      }
      // The trash counted the item in the scopes it goes back to: it adds nothing to them, but
      // a scope already over its quota (lowered since) takes nothing back.
      const quota = await access.quota.reserve(access, dst.real, 0);
      try {
        await replacement?.apply();
        const restored = await putBack(ctx, access, folder, name, dst, item, opts.stillAllowed);
        await quota.commit(item.size);
        await forgetItem(ctx, item);
        return { path: dst.virtual, recreatedFolders, copied: restored.copied, real: dst.real };
      } finally {
        quota.release();
      }
    });
  } finally {
    if (dst !== target) await dst.close();
    await target.close();
  }
}

/** Moves an item's entry from its trash folder to its place, making the folders on the way. */
async function putBack(
  ctx: AppContext,
  access: FileAccess,
  folder: Pinned,
  name: string,
  dst: Opened,
  item: StoredTrashItem,
  stillAllowed?: () => Promise<unknown>,
): Promise<{ copied: boolean }> {
  const { dirMode } = ctx.store.settings.get();
  const place = await placeOf(dst, dirMode);
  let copied: boolean;
  try {
    // Across file systems the record goes exactly when the copy back is whole.
    // What an override replaced went through the one delete: the place must be free now.
    ({ copied } = await moveEntry(access, folder, name, place.folder, place.name, {
      alongside: async (tx) => await tx.trash.delete(item.id),
      ...(stillAllowed && { progress: { stillAllowed } }),
    }));
  } catch (err) {
    // The folders made on the way for it go again with the failed restore.
    await place.undo();
    throw err;
  } finally {
    await place.release();
  }
  if (copied) {
    ctx.log.warn(
      { path: dst.virtual },
      'restored across file systems: copied out of the trash, then removed',
    );
  }
  return { copied };
}

/** Everything in the item must be allowed at its restored place (rules and private paths). */
async function assertRulesAllow(
  access: FileAccess,
  folder: Pinned,
  name: string,
  virtual: string,
  real: string,
): Promise<void> {
  const node = await folder.lookup(name);
  if (!node) throw notFound('the item is no longer in the trash folder');
  try {
    if (!node.stat.isDirectory()) return;
    const base = '/' + name;
    for await (const e of walkTree(access, node, base, { follow: false })) {
      const rel = e.virtual.slice(base.length);
      if (!access.rulesAllowResolved(joinVirtual(virtual, rel), real + rel)) {
        throw forbidden('a rule refuses part of this folder at its original place');
      }
    }
  } finally {
    await node.close();
  }
}

/** Removes an item's (now empty or restored) folder and its record. */
async function forgetItem(ctx: AppContext, item: StoredTrashItem): Promise<void> {
  const [userDir, id] = itemSegments(item);
  await inTrash(ctx, [userDir!], false, (folder) => removeTree(folder, id!)).catch((err: unknown) => {
    ctx.log.warn({ err, id: item.id }, 'a trash folder could not be removed');
  });
  await ctx.store.trash.delete(item.id);
}

/** Deletes an item forever: its bytes, then its record. */
export async function deleteItemForever(ctx: AppContext, item: StoredTrashItem): Promise<void> {
  const [userDir, id] = itemSegments(item);
  try {
    await inTrash(ctx, [userDir!], false, (folder) => removeTree(folder, id!));
  } catch (err) {
    // A trash folder already gone leaves only the record to remove.
    if (!(err instanceof AppError && err.kind === 'not_found')) throw err;
  }
  await ctx.store.trash.delete(item.id);
}

/** Empties what a request reaches of a user's trash (`reachableItems`); answers how many items went. */
export async function emptyTrash(ctx: AppContext, user: StoredUser & Confinement): Promise<number> {
  const items = await reachableItems(ctx, user);
  for (const { item } of items) await deleteItemForever(ctx, item);
  return items.length;
}

/** Empties the whole trash of an account that no longer exists. */
async function emptyTrashOf(ctx: AppContext, userId: number): Promise<number> {
  const items = await ctx.store.trash.list(userId);
  for (const item of items) await deleteItemForever(ctx, item);
  return items.length;
}

/**
 * Deletes forever every item older than the retention (every user's), as of `now` (Unix ms), and
 * every item of an account that no longer exists. Retention 0 keeps items until they are deleted
 * by hand. Answers how many items went.
 */
export async function purgeExpired(ctx: AppContext, now: number = Date.now()): Promise<number> {
  let purged = 0;
  for (const userId of await ctx.store.trash.userIds()) {
    if (!(await ctx.store.users.get(userId))) purged += await emptyTrashOf(ctx, userId);
  }
  const days = ctx.store.settings.get().trash.retentionDays;
  if (days <= 0) return purged;
  const expired = await ctx.store.trash.deletedBefore(now - days * DAY_MS);
  for (const item of expired) await deleteItemForever(ctx, item);
  return purged + expired.length;
}
