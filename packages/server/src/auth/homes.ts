import type { Permissions } from '@filebrowser/contract';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { badRequest, conflict } from '../errors.js';
import { serverAccess, type FileAccess } from '../files/access/access.js';
import { readFolder } from '../files/access/anchor.js';
import { makeDirectory } from '../files/change/write.js';
import { may } from './policy.js';
import { usernameKey } from './usernames.js';

/** A scope as stored: "/" or "/a/b" — leading slash, no trailing slash, no dot segments. */
export function normaliseScope(scope: string): string {
  const trimmed = scope.trim().replaceAll('\\', '/');
  // Refused rather than silently clamped: a scope naming ".." is a mistake the admin should see.
  if (trimmed.split('/').includes('..')) throw badRequest('scope must stay inside the server root');
  const clean = path.posix.normalize('/' + trimmed);
  return clean.length > 1 ? clean.replace(/\/+$/, '') : '/';
}

/** File Browser's home folder name for a username: unsafe characters become "-". */
export function homeFolderName(username: string): string {
  const name = username
    .trim()
    .replaceAll('..', '')
    .replace(/[^0-9A-Za-z@_.-]/g, '-')
    .replace(/-+/g, '-');
  if (name === '' || name === '-' || name === '.') {
    throw badRequest('this username cannot be turned into a home folder name');
  }
  return name;
}

export function homeScope(userHomeBasePath: string, username: string): string {
  return normaliseScope(`${userHomeBasePath || '/users'}/${homeFolderName(username)}`);
}

/** `inner` is `outer` or lies below it; compared folded, as a case-insensitive disk would. */
function within(inner: string, outer: string): boolean {
  const [i, o] = [usernameKey(inner), usernameKey(outer)];
  return i === o || o === '/' || i.startsWith(`${o}/`);
}

/**
 * Why a new home folder (a scope as `homeScope` makes it) cannot be given, or undefined when it
 * can: its owner would reach another user's files (an existing scope at or below it, whoever
 * holds it), or another ordinary user would reach the new owner's (the home below their scope).
 * Administrators' scopes are left out of the second test only: theirs is the whole root, and they
 * may change any scope anyway, so counting them would refuse every home. Scopes are compared as
 * written and where they lead on the disk (`rootReal`: the served folder's real path), so that a
 * scope reached through a link is no way around it.
 */
export async function homeConflict(
  ctx: AppContext,
  home: string,
  users: readonly { scope: string; perm: Permissions }[],
): Promise<string | undefined> {
  const access = await serverAccess(ctx);
  const homeReal = await realPlace(access, home);
  // Each scope is resolved once, however many users share it (a sign-up waits for this walk).
  const places = new Map<string, Promise<string>>();
  for (const u of users) {
    const scope = normaliseScope(u.scope || '/');
    let place = places.get(scope);
    if (!place) places.set(scope, (place = realPlace(access, scope)));
    const scopeReal = await place;
    if (usernameKey(scope) === usernameKey(home) || scopeReal === homeReal)
      return 'another user already owns this home folder';
    if (within(scope, home) || within(scopeReal, homeReal))
      return 'this home folder would hold another user’s folder';
    if (!may(u.perm, 'admin') && (within(home, scope) || within(homeReal, scopeReal)))
      return 'this home folder lies inside another user’s folder';
  }
  return undefined;
}

/**
 * Where a scope leads on the disk, as the server's file access resolves it (links followed inside
 * the root); as written, below the root, where it cannot be resolved (a link leading out).
 */
async function realPlace(access: FileAccess, scope: string): Promise<string> {
  const opened = await access.open(scope, { rules: false }).catch(() => undefined);
  if (!opened) return path.join(access.scope.rootReal, scope);
  try {
    return opened.real;
  } finally {
    await opened.close();
  }
}

/**
 * Creates a scope folder under the server root, each missing folder made inside the one before it
 * through the server's own file access: a symlink planted on the way is refused (403), never
 * followed, so a home can never be made outside the root. `fresh` (a new home) refuses with 409 a
 * folder that is already there and not empty.
 */
export async function ensureScopeFolder(
  ctx: AppContext,
  scope: string,
  dirMode: number,
  opts: { fresh?: boolean } = {},
): Promise<void> {
  const access = await serverAccess(ctx);
  const target = await access.open(normaliseScope(scope), { rules: false });
  try {
    // A home is new: files already there (a deleted account's, say) are nobody's to hand over.
    if (
      opts.fresh &&
      target.node &&
      target.stat?.isDirectory() &&
      (await readFolder(target.node)).length > 0
    ) {
      throw conflict(
        'the home folder for this username already exists and holds files: an administrator can remove or rename it',
      );
    }
    await makeDirectory(access, target, dirMode);
  } finally {
    await target.close();
  }
}
