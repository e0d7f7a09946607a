import fs from 'node:fs';
import path from 'node:path';
import type { Rule } from '@filebrowser/contract';
import type { ServerConfig } from '../../config/types.js';
import { allDatabaseSideFiles } from '../../store/side-files.js';
import { isPostgresUrl } from '../../store/sql.js';
import { isInside, type Scope } from './resolver.js';

/** The real path a file or folder has, or would have once created (nearest existing ancestor resolved). */
export function realPathLoose(p: string): string {
  const rest: string[] = [];
  let cur = path.resolve(p);
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...rest.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return path.resolve(p);
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

export interface ServerPaths {
  /** Folder of resumable uploads' staging files. */
  uploadsDir: string;
  /** Folder of the preview cache (`--cacheDir`, or beside the database). */
  cacheDir: string;
  /**
   * Folder of the trash (`<userId>/<itemId>/<name>`), on the file system of the served root so
   * that a delete is a rename: beside the database when that is on the same file system, else
   * `<root>/.filebrowser-trash`.
   */
  trashDir: string;
  /** Real paths users must never reach: the database and its side files, staging, the cache, the trash. */
  private: string[];
}

/** The device of a path's nearest existing folder (a folder not made yet will be made on it). */
function deviceOf(p: string): number | undefined {
  let cur = path.resolve(p);
  for (;;) {
    try {
      return fs.statSync(cur).dev;
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return undefined;
      cur = parent;
    }
  }
}

const known = new Map<string, ServerPaths>();

/**
 * Where the server keeps its own files. Beside the database normally; when the database sits
 * inside the served folder (File Browser's defaults: root `.` and `./filebrowser.db`), those files
 * are in every whole-root user's view, so they are made unreachable (see `privateRules`) and the
 * staging and cache folders get names no user folder is likely to have.
 */
export function serverPaths(config: ServerConfig): ServerPaths {
  const key = JSON.stringify([config.database, config.root, config.cacheDir]);
  const cached = known.get(key);
  if (cached) return cached;
  const root = realPathLoose(config.root);
  // PostgreSQL: no database file; what instances share (uploads in progress, the trash, previews)
  // lives in the shared folder, out of every user's reach as a database's folder inside it would be.
  const database = isPostgresUrl(config.database) ? undefined : realPathLoose(config.database);
  const dbDir = database === undefined ? root : path.dirname(database);
  const exposed = isInside(root, dbDir);
  const uploadsDir = path.join(dbDir, exposed ? '.filebrowser-uploads' : 'uploads');
  const cacheDir = config.cacheDir
    ? realPathLoose(config.cacheDir)
    : path.join(dbDir, exposed ? '.filebrowser-cache' : 'cache');
  const trashDir =
    deviceOf(dbDir) === deviceOf(root)
      ? path.join(dbDir, exposed ? '.filebrowser-trash' : 'trash')
      : path.join(root, '.filebrowser-trash');
  const paths: ServerPaths = {
    uploadsDir,
    cacheDir,
    trashDir,
    private: [
      ...(database === undefined ? [] : [database, ...allDatabaseSideFiles(database)]),
      uploadsDir,
      cacheDir,
      trashDir,
    ],
  };
  known.set(key, paths);
  return paths;
}

/**
 * Deny rules, as seen from a user's scope, for the server's private paths inside it. They come
 * after every other rule, so nothing allows them again, and rules already apply everywhere:
 * listings, reads, writes, moves, deletes of a parent folder, archives and search.
 */
export function privateRules(config: ServerConfig, scope: Scope): Rule[] {
  const rules: Rule[] = [];
  for (const p of serverPaths(config).private) {
    const virtual = isInside(p, scope.real) ? '/' : scope.virtualOf(p);
    if (virtual !== undefined) rules.push({ regex: false, allow: false, path: virtual, regexp: null });
  }
  return rules;
}

/** One private path as a sandboxed command must find it: an empty folder or an empty file. */
export interface PrivateMask {
  path: string;
  folder: boolean;
}

/** A tree a sandboxed command sees, by its real path; only a writable one can gain new names. */
export interface VisibleTree {
  path: string;
  writable: boolean;
}

/** Empty files made where a private file is missing, so that a mask can stand there: users by path. */
const placeholders = new Map<string, { users: number; ino: number }>();

/**
 * The masks that hide the server's private paths inside the trees a sandboxed command sees.
 * A private path the command could create (missing, in a writable tree) is made first, so that
 * the mask stands on it and the name cannot be taken: the folders (staging, cache, trash) for
 * good, 0700 as the server makes them, the files (a `-journal` a planted copy of would be rolled
 * into the database at the next start, the restore files) as empty placeholders removed again
 * by `release` once no command needs them. Throws when a tree lies inside a private path, or a
 * private path is a symbolic link (a mask would land where it leads).
 */
export function maskPrivatePaths(
  config: ServerConfig,
  trees: readonly VisibleTree[],
): { masks: PrivateMask[]; release(): void } {
  const paths = serverPaths(config);
  const folders = new Set([paths.uploadsDir, paths.cacheDir, paths.trashDir]);
  const masks: PrivateMask[] = [];
  const held: string[] = [];
  const release = () => {
    for (const p of held.splice(0)) dropPlaceholder(p);
  };
  try {
    for (const p of paths.private) {
      const tree = trees.find((t) => isInside(t.path, p));
      if (!tree) continue;
      if (p === tree.path || isInside(p, tree.path)) {
        throw new Error(`the server's own path ${p} holds a folder commands see (${tree.path})`);
      }
      let st = lstatOrUndefined(p);
      if (st?.isSymbolicLink()) throw new Error(`the server's own path ${p} is a symbolic link`);
      if (!st && tree.writable) {
        if (folders.has(p)) fs.mkdirSync(p, { recursive: true, mode: 0o700 });
        else holdPlaceholder(p);
        if (!folders.has(p)) held.push(p);
        st = lstatOrUndefined(p);
      } else if (st && placeholders.has(p)) {
        holdPlaceholder(p);
        held.push(p);
      }
      if (st) masks.push({ path: p, folder: st.isDirectory() });
    }
  } catch (err) {
    release();
    throw err;
  }
  return { masks, release };
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function holdPlaceholder(p: string): void {
  const known = placeholders.get(p);
  if (known) {
    known.users++;
    return;
  }
  const fd = fs.openSync(
    p,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    0o600,
  );
  try {
    placeholders.set(p, { users: 1, ino: fs.fstatSync(fd).ino });
  } finally {
    fs.closeSync(fd);
  }
}

/** Removes a placeholder its last user let go of, unless something else took its place meanwhile. */
function dropPlaceholder(p: string): void {
  const known = placeholders.get(p);
  if (!known || --known.users > 0) return;
  placeholders.delete(p);
  const st = lstatOrUndefined(p);
  if (st?.isFile() && st.size === 0 && st.ino === known.ino) fs.unlinkSync(p);
}
