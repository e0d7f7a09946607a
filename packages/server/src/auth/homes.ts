import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, badRequest } from '../errors.js';

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

/**
 * Creates a scope folder under the server root. The real path of what exists is checked
 * after creation, so a symlink planted in the base path cannot send a home outside the root.
 */
export async function ensureScopeFolder(root: string, scope: string, dirMode: number): Promise<void> {
  const target = path.join(root, normaliseScope(scope));
  await fs.mkdir(target, { recursive: true, mode: dirMode });
  const [realRoot, realTarget] = await Promise.all([fs.realpath(root), fs.realpath(target)]);
  if (realTarget !== realRoot && !realTarget.startsWith(realRoot + path.sep)) {
    throw new AppError('forbidden', 'the home folder resolves outside the server root');
  }
}
