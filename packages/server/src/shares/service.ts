import type { Share, ShareRequest } from '@filebrowser/contract';
import { checkPassword, hashPassword, MAX_PASSWORD_BYTES } from '../auth/passwords.js';
import type { AppContext } from '../context.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { fileAccessFor } from '../files/access.js';
import { canonicalise, isInside } from '../files/resolver.js';
import type { StoredShare } from '../store/shares.js';
import type { StoredUser } from '../store/users.js';
import { MAX_SHARE_DURATION, newShareHash, presentShare, UNIT_SECONDS } from './links.js';

/** Managing links needs share and download: a link is a download handed to someone else. */
export function assertCanShare(user: StoredUser): void {
  if (!user.perm.share || !user.perm.download) throw forbidden();
}

/** The stored form of a request path: canonical, with the trailing "/" kept (folder shares). */
function sharePath(raw: string): string {
  const c = canonicalise(raw);
  return c.trailingSlash && c.virtual !== '/' ? c.virtual + '/' : c.virtual;
}

/** Real path a share points at, through its owner's scope; undefined when it no longer resolves. */
export async function shareRealPath(ctx: AppContext, share: StoredShare): Promise<string | undefined> {
  const owner = ctx.store.users.get(share.userId);
  if (!owner) return undefined;
  try {
    const access = await fileAccessFor(ctx, owner);
    return (await access.scope.resolve(share.path)).real;
  } catch {
    return undefined;
  }
}

export function listShares(ctx: AppContext, user: StoredUser): Share[] {
  assertCanShare(user);
  return ctx.store.shares.list(user.perm.admin ? undefined : user.id).map(presentShare);
}

/** Links to one path: the caller's own, or for admins every user's link to the same file on disk. */
export async function sharesOfPath(ctx: AppContext, user: StoredUser, rawPath: string): Promise<Share[]> {
  assertCanShare(user);
  const wanted = sharePath(rawPath);
  if (!user.perm.admin) {
    return ctx.store.shares
      .list(user.id)
      .filter((s) => s.path === wanted)
      .map(presentShare);
  }
  const access = await fileAccessFor(ctx, user);
  const real = (await access.scope.resolve(wanted)).real;
  const result: Share[] = [];
  for (const s of ctx.store.shares.list()) {
    if (s.userId === user.id ? s.path === wanted : (await shareRealPath(ctx, s)) === real) {
      result.push(presentShare(s));
    }
  }
  return result;
}

export async function createShare(
  ctx: AppContext,
  user: StoredUser,
  rawPath: string,
  body: ShareRequest | undefined,
): Promise<Share> {
  assertCanShare(user);
  if (!body) throw badRequest('a JSON body {password, expires, unit} is required');
  const path = sharePath(rawPath);
  const access = await fileAccessFor(ctx, user);
  const target = await access.resolve(path);
  if (!target.stat) throw notFound();

  const expiresText = (body.expires ?? '').trim();
  let expire = 0;
  if (expiresText !== '') {
    if (!/^\d+$/.test(expiresText) || Number(expiresText) > MAX_SHARE_DURATION) {
      throw badRequest(`expires must be a whole number from 0 to ${MAX_SHARE_DURATION}`);
    }
    const n = Number(expiresText);
    const unit = UNIT_SECONDS[body.unit ?? 'hours'] ?? UNIT_SECONDS.hours!;
    expire = n === 0 ? 0 : Math.floor(Date.now() / 1000) + n * unit;
  }
  const password = (body.password ?? '').trim();
  if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES) {
    throw badRequest(`the share password is too long, maximum length is ${MAX_PASSWORD_BYTES} bytes`);
  }
  const share = ctx.store.shares.create({
    hash: newShareHash(),
    path,
    userId: user.id,
    expire,
    passwordHash: password ? await hashPassword(password) : '',
  });
  return presentShare(share);
}

export function deleteShare(ctx: AppContext, user: StoredUser, hash: string): void {
  assertCanShare(user);
  if (!hash) throw badRequest('the share hash is missing');
  const share = ctx.store.shares.get(hash);
  if (!share) throw notFound();
  if (share.userId !== user.id && !user.perm.admin) throw forbidden();
  ctx.store.shares.delete(hash);
}

export async function checkSharePassword(share: StoredShare, password: string): Promise<boolean> {
  return checkPassword(password, share.passwordHash);
}

/**
 * Keeps links true to what they pointed at after a move or rename: a link to the moved item or
 * anything below it follows it, so nothing created later under the old name is ever exposed.
 * Links whose item left its owner's scope are removed.
 */
export async function sharesFollowMove(ctx: AppContext, fromReal: string, toReal: string): Promise<void> {
  for (const share of ctx.store.shares.list()) {
    const owner = ctx.store.users.get(share.userId);
    if (!owner) continue;
    let access;
    try {
      access = await fileAccessFor(ctx, owner);
    } catch {
      continue;
    }
    const virtual = share.path.replace(/\/$/, '') || '/';
    const real = (await access.scope.resolve(virtual).catch(() => undefined))?.real;
    // After the move the old path no longer exists; resolve gives where it was.
    if (!real || !isInside(fromReal, real)) continue;
    const movedReal = toReal + real.slice(fromReal.length);
    const movedVirtual = access.scope.virtualOf(movedReal);
    if (movedVirtual === undefined) ctx.store.shares.delete(share.hash);
    else
      ctx.store.shares.updatePath(
        share.hash,
        movedVirtual + (share.path.endsWith('/') && movedVirtual !== '/' ? '/' : ''),
      );
  }
}

/** A deleted item takes every link to it, or to anything below it, with it (every owner's). */
export async function sharesFollowDelete(ctx: AppContext, deletedReal: string): Promise<void> {
  for (const share of ctx.store.shares.list()) {
    const real = await shareRealPath(ctx, share);
    if (real && isInside(deletedReal, real)) ctx.store.shares.delete(share.hash);
  }
}
