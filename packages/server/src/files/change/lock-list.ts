import type { DavLockInfo } from '@filebrowser/contract';
import type { AppContext } from '../../context.js';
import type { DavLock } from '../../store/dav.js';
import type { StoredUser } from '../../store/users.js';
import { fileAccessFor, type FileAccess } from '../access/access.js';
import { liveFor } from './locks.js';

/**
 * WebDAV locks as administrators see them, through the API and the command line alike: the
 * locks in force. The server (`sweep`) first drops those whose holders lost the locked place
 * (files/locks.ts); the command line does not, as it may not know the served folder the server
 * was started with, and would take every place for lost.
 */
export async function locksInForce(ctx: AppContext, opts: { sweep: boolean }): Promise<DavLockInfo[]> {
  const out: DavLockInfo[] = [];
  const accesses = new Map<number, Promise<FileAccess>>();
  const accessOf = (user: StoredUser) => {
    if (!accesses.has(user.id)) accesses.set(user.id, fileAccessFor(ctx, user));
    return accesses.get(user.id)!;
  };
  for (const lock of await ctx.store.davLocks.all()) {
    if (opts.sweep && !(await liveFor(ctx, lock, lock.path, accessOf))) continue;
    out.push(await present(ctx, lock));
  }
  return out;
}

/** Breaks a lock: its holder's next write through it is refused, and others may write. */
export async function breakLock(ctx: AppContext, token: string): Promise<DavLockInfo | undefined> {
  const lock = await ctx.store.davLocks.get(token);
  if (!lock) return undefined;
  await ctx.store.davLocks.delete(token);
  return await present(ctx, lock);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The text of an owner element as the client sent it (its markup dropped, references decoded). */
function ownerText(xml: string): string {
  return xml
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, ref: string) => {
      if (ref[0] !== '#') return ENTITIES[ref] ?? whole;
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .trim();
}

async function present(ctx: AppContext, lock: DavLock): Promise<DavLockInfo> {
  return {
    token: lock.token,
    path: lock.path,
    userID: lock.userId,
    username: (await ctx.store.users.get(lock.userId))?.username ?? '',
    scope: lock.scope,
    depth: lock.depth,
    owner: ownerText(lock.owner),
    createdAt: lock.createdAt,
    expiresAt: lock.expiresAt,
  };
}
