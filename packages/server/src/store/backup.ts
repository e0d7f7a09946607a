import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from './db.js';
import { lockDatabase } from './server-lock.js';
import { databaseSideFiles } from './side-files.js';

/** A backup or restore asked of something it must not do; the message says what instead. */
export class BackupError extends Error {
  override name = 'BackupError';
}

export interface CopyResult {
  /** The schema version of the copy. */
  version: number;
}

/**
 * Copies the database to `target` through SQLite's online backup, which reads what is in the
 * -wal file too and starts over when another connection writes meanwhile: the copy is one
 * consistent moment of a database a server keeps using. The copy is a single file (no -wal),
 * mode 0600, and appears at `target` only once complete.
 */
export async function backupDatabase(database: string, target: string): Promise<CopyResult> {
  if (samePlace(database, target)) throw new BackupError(`${target} is the database itself`);
  if (isDirectory(target)) throw new BackupError(`${target} is a folder: name the backup file`);
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  const partial = `${target}.partial-${process.pid}`;
  fs.rmSync(partial, { force: true });
  fs.closeSync(fs.openSync(partial, 'wx', 0o600));
  const source = new Database(database, { fileMustExist: true, timeout: 5000 });
  try {
    await source.backup(partial);
    const version = singleFile(partial);
    syncFile(partial);
    fs.renameSync(partial, target);
    syncFolder(path.dirname(target));
    return { version };
  } catch (err) {
    removeWithSideFiles(partial);
    throw err;
  } finally {
    source.close();
  }
}

export interface RestoreResult extends CopyResult {
  /** Where the database that was replaced now is, when there was one. */
  replaced?: string;
}

/**
 * Puts a backup in the database's place. Refused while a server holds the database (it would
 * keep writing to the file it has open), and for a file that is not a File Browser database or
 * comes from a newer version. The replaced database is kept beside it, with the same mode and
 * owner going to the restored one, so that a restore run as root still leaves a database the
 * server's account can open.
 */
export function restoreDatabase(source: string, database: string): RestoreResult {
  if (!fs.existsSync(source)) throw new BackupError(`${source} does not exist`);
  if (samePlace(database, source)) throw new BackupError(`${source} is the database itself`);
  const lock = lockDatabase(database, 'restore');
  try {
    const side = databaseSideFiles(database);
    removeWithSideFiles(side.restoring);
    copyPrivately(source, side.restoring);
    let version: number;
    try {
      version = checkBackup(side.restoring, source);
    } catch (err) {
      removeWithSideFiles(side.restoring);
      throw err;
    }
    const replaced = setAside(database, side.beforeRestore);
    if (replaced) keepOwnership(replaced, side.restoring);
    syncFile(side.restoring);
    fs.renameSync(side.restoring, database);
    syncFolder(path.dirname(path.resolve(database)));
    return { version, ...(replaced ? { replaced: side.beforeRestore } : {}) };
  } finally {
    lock.release();
  }
}

/** The schema version of a File Browser database file; throws when it is none this version can use. */
function checkBackup(file: string, shownAs: string): number {
  const db = new Database(file, { fileMustExist: true });
  try {
    let version: number;
    let tables: string[];
    try {
      version = db.pragma('user_version', { simple: true }) as number;
      tables = (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
      ).map((t) => t.name);
    } catch {
      throw new BackupError(`${shownAs} is not a File Browser database (not an SQLite file)`);
    }
    if (version === 0 || !tables.includes('users') || !tables.includes('config')) {
      throw new BackupError(`${shownAs} is not a File Browser database`);
    }
    if (version > SCHEMA_VERSION) {
      throw new BackupError(
        `${shownAs} was written by a newer File Browser (schema ${version}, this version knows ${SCHEMA_VERSION}): upgrade to restore it`,
      );
    }
    const check = db.pragma('quick_check', { simple: true }) as string;
    if (check !== 'ok') throw new BackupError(`${shownAs} is damaged: ${check}`);
    // One self-contained file; the server turns WAL back on when it opens it.
    db.pragma('journal_mode = DELETE');
    return version;
  } finally {
    db.close();
  }
}

/** A backup file as one file: the copy keeps the source's WAL flag, which would make readers create -wal/-shm. */
function singleFile(file: string): number {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

/**
 * Moves the current database (if any) to `aside`. Folding its -wal in first leaves one file; a
 * database too damaged for that keeps its -wal and -journal beside it under the new name, so
 * they never meet the restored file (SQLite would apply them to it).
 */
function setAside(database: string, aside: string): fs.Stats | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(database);
  } catch {
    return undefined;
  }
  try {
    const db = new Database(database, { fileMustExist: true, timeout: 5000 });
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
  } catch {
    // Moved as it is, side files with it.
  }
  removeWithSideFiles(aside);
  fs.renameSync(database, aside);
  for (const suffix of ['-wal', '-journal']) {
    if (fs.existsSync(database + suffix)) fs.renameSync(database + suffix, aside + suffix);
  }
  fs.rmSync(`${database}-shm`, { force: true });
  return stat;
}

function keepOwnership(was: fs.Stats, file: string): void {
  try {
    fs.chmodSync(file, was.mode & 0o770);
    if (process.getuid?.() === 0) fs.chownSync(file, was.uid, was.gid);
  } catch {
    // A file system without modes or owners.
  }
}

/** Copies bytes into a new file that is 0600 from its first moment (copyFile would take the source's mode). */
function copyPrivately(from: string, to: string): void {
  const input = fs.openSync(from, 'r');
  try {
    const output = fs.openSync(to, 'wx', 0o600);
    try {
      const buffer = Buffer.alloc(1 << 20);
      for (;;) {
        const n = fs.readSync(input, buffer, 0, buffer.length, null);
        if (n === 0) break;
        for (let done = 0; done < n;) done += fs.writeSync(output, buffer, done, n - done);
      }
    } finally {
      fs.closeSync(output);
    }
  } finally {
    fs.closeSync(input);
  }
}

function removeWithSideFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
}

function samePlace(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return real(a) === real(b);
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes a rename durable; not every platform can open a folder for that, and then it is skipped. */
function syncFolder(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Windows.
  }
}
