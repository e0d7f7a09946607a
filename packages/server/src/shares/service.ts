import type { Share, ShareRequest } from '@filebrowser/contract';
import { checkPassword, hashPassword, MAX_PASSWORD_BYTES } from '../auth/passwords.js';
import { assertMay, may } from '../auth/policy.js';
import type { AppContext } from '../context.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { fileAccessFor, type FileAccess } from '../files/access/access.js';
import { deviceOf, identity } from '../files/access/identity.js';
import { canonicalise, isInside } from '../files/access/resolver.js';
import type { StoredShare } from '../store/shares.js';
import type { StoredUser } from '../store/users.js';
import { MAX_SHARE_DURATION, newShareHash, presentShare, UNIT_SECONDS } from './links.js';

/** Managing links needs share and download: a link is a download handed to someone else. */
export function assertCanShare(user: StoredUser): void {
  assertMay(user.perm, 'share');
}

/** The stored form of a request path: canonical, with the trailing "/" kept (folder shares). */
function sharePath(raw: string): string {
  const c = canonicalise(raw);
  return c.trailingSlash && c.virtual !== '/' ? c.virtual + '/' : c.virtual;
}

/** A share's place below its root without the folder mark. */
function placeOf(share: StoredShare): string {
  return share.rootPath.replace(/\/+$/, '') || '/';
}

/** The root path of a folder share keeps its trailing "/", like its owner path. */
function marked(place: string, folder: boolean): string {
  return folder && place !== '/' ? place + '/' : place;
}

export async function listShares(ctx: AppContext, user: StoredUser): Promise<Share[]> {
  assertCanShare(user);
  return (await ctx.store.shares.list(may(user.perm, 'admin') ? undefined : user.id)).map(presentShare);
}

/** Links to one path: the caller's own, or for admins every user's link to the same item. */
export async function sharesOfPath(ctx: AppContext, user: StoredUser, rawPath: string): Promise<Share[]> {
  assertCanShare(user);
  const wanted = sharePath(rawPath);
  if (!may(user.perm, 'admin')) {
    return (await ctx.store.shares.list(user.id)).filter((s) => s.path === wanted).map(presentShare);
  }
  const access = await fileAccessFor(ctx, user);
  const place = access.rootPathOf((await access.resolve(wanted, { rules: false })).real);
  return (await ctx.store.shares.list())
    .filter(
      (s) => (s.userId === user.id && s.path === wanted) || (place !== undefined && placeOf(s) === place),
    )
    .map(presentShare);
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
  const expire = expiryOf(body);
  const password = (body.password ?? '').trim();
  if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES) {
    throw badRequest(`the share password is too long, maximum length is ${MAX_PASSWORD_BYTES} bytes`);
  }
  // The slow part (bcrypt) comes first: the item is read after it and its row written at once, so
  // an item deleted or renamed meanwhile is either gone before the link (404) or the link is to
  // that very object, which nothing taking the name later is.
  const passwordHash = password ? await hashPassword(password, ctx.config.bcryptCost) : '';
  const access = await fileAccessFor(ctx, user);
  const target = await access.open(path);
  try {
    if (!target.stat || !target.node) throw notFound();
    // The link is to the item itself: its real place below the root, not a path in the scope.
    const place = access.rootPathOf(target.real);
    if (place === undefined) throw forbidden('only files inside the served folder can be shared');
    const share = await ctx.store.shares.create({
      hash: newShareHash(),
      path,
      rootId: access.root.id,
      rootPath: marked(place, path.endsWith('/')),
      itemId: identity(await target.node.statNs()),
      userId: user.id,
      expire,
      passwordHash,
    });
    return presentShare(share);
  } finally {
    await target.close();
  }
}

/** Unix seconds the link ends at from `expires` and `unit`; 0 for a link that never expires. */
function expiryOf(body: ShareRequest): number {
  const expiresText = String(body.expires ?? '').trim();
  if (expiresText === '') return 0;
  if (!/^\d+$/.test(expiresText) || Number(expiresText) > MAX_SHARE_DURATION) {
    throw badRequest(`expires must be a whole number from 0 to ${MAX_SHARE_DURATION}`);
  }
  const n = Number(expiresText);
  const unit = UNIT_SECONDS[body.unit ?? 'hours'] ?? UNIT_SECONDS.hours!;
  return n === 0 ? 0 : Math.floor(Date.now() / 1000) + n * unit;
}

export async function deleteShare(ctx: AppContext, user: StoredUser, hash: string): Promise<void> {
  assertCanShare(user);
  if (!hash) throw badRequest('the share hash is missing');
  const share = await ctx.store.shares.get(hash);
  if (!share) throw notFound();
  if (share.userId !== user.id && !may(user.perm, 'admin')) throw forbidden();
  await ctx.store.shares.delete(hash);
}

export async function checkSharePassword(share: StoredShare, password: string): Promise<boolean> {
  return checkPassword(password, share.passwordHash);
}

/**
 * Keeps links true to what they pointed at after a move or rename (real paths, as `access` of the
 * mover reached them): a link to the moved item or anything below it follows it, so nothing
 * created later under the old name is ever exposed. Links whose item left its owner's scope are
 * removed. A rename keeps the item's identity; a move across file systems copies it into a new
 * object, which the link takes on (`identityAfterMove`).
 */
export async function sharesFollowMove(
  ctx: AppContext,
  access: FileAccess,
  fromReal: string,
  toReal: string,
  /**
   * The move merged into a folder that was there: nothing at the destination is a copy of an item
   * that moved whole, so the links keep the identities they had (a file renamed within one file
   * system keeps its own; one copied across file systems, or the folder merged into, serves nothing).
   */
  merged = false,
): Promise<void> {
  const from = access.rootPathOf(fromReal);
  const to = access.rootPathOf(toReal);
  if (from === undefined) return;
  for (const share of await ctx.store.shares.list()) {
    if (share.rootId !== access.root.id) continue;
    const place = placeOf(share);
    if (!isInside(from, place)) continue;
    const owner = await ctx.store.users.get(share.userId);
    const moved =
      to === undefined
        ? undefined
        : to === '/'
          ? place.slice(from.length) || '/'
          : to + place.slice(from.length);
    const ownerAccess =
      owner && moved !== undefined ? await fileAccessFor(ctx, owner).catch(() => undefined) : undefined;
    const movedVirtual = moved === undefined ? undefined : ownerAccess?.virtualOfRootPath(moved);
    if (moved === undefined || movedVirtual === undefined) {
      await ctx.store.shares.delete(share.hash);
      continue;
    }
    const folder = share.rootPath.endsWith('/');
    await ctx.store.shares.move(
      share.hash,
      marked(movedVirtual, share.path.endsWith('/')),
      marked(moved, folder),
      merged ? share.itemId : await identityAfterMove(ownerAccess!, movedVirtual, share.itemId),
    );
  }
}

/**
 * The identity a link keeps after its item moved to `virtual`: the recorded one, unless the item
 * there now is on another device (the move crossed file systems: what stands there is the copy).
 * Another object on the same device is not the item, and the link keeps serving nothing.
 */
async function identityAfterMove(access: FileAccess, virtual: string, recorded: string): Promise<string> {
  if (recorded === '') return recorded;
  const item = await access.open(virtual).catch(() => undefined);
  try {
    const now = item?.node ? identity(await item.node.statNs()) : undefined;
    return now !== undefined && deviceOf(now) !== deviceOf(recorded) ? now : recorded;
  } finally {
    await item?.close();
  }
}

/** A deleted item takes every link to it, or to anything below it, with it (every owner's). */
export async function sharesFollowDelete(
  ctx: AppContext,
  access: FileAccess,
  deletedReal: string,
): Promise<void> {
  const gone = access.rootPathOf(deletedReal);
  if (gone === undefined) return;
  for (const share of await ctx.store.shares.list()) {
    if (share.rootId === access.root.id && isInside(gone, placeOf(share)))
      await ctx.store.shares.delete(share.hash);
  }
}
