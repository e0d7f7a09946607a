import fs from 'node:fs';
import path from 'node:path';
import type { Rule } from '@filebrowser/contract';
import type { ServerConfig } from '../config/types.js';
import { allDatabaseSideFiles } from '../store/side-files.js';
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
  const database = realPathLoose(config.database);
  const root = realPathLoose(config.root);
  const dbDir = path.dirname(database);
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
    private: [database, ...allDatabaseSideFiles(database), uploadsDir, cacheDir, trashDir],
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
