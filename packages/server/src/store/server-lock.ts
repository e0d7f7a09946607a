import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { databaseSideFiles } from './side-files.js';

/**
 * Who holds a database: one running server, or one restore. SQLite lets any number of processes
 * share a database and says nothing about who else has it open, so the holder keeps an
 * exclusive SQLite lock on a file beside it (`<database>.lock`), for as long as it runs.
 *
 * Why a lock and not a pid file: the operating system drops the lock when its process ends,
 * however it ends (SIGKILL, power loss, an OOM kill), so a stale lock never blocks a restore
 * and a recycled pid (pid 1 in every container) never looks like a live server. Why SQLite's
 * lock: it is the same kind of lock SQLite trusts for the database itself (POSIX record locks,
 * LockFileEx on Windows), and it is held between connections of one process too, which plain
 * record locks are not.
 */
export interface DatabaseLock {
  release(): void;
}

export class DatabaseBusyError extends Error {
  override name = 'DatabaseBusyError';
}

export type LockPurpose = 'serve' | 'restore';

export function lockDatabase(database: string, purpose: LockPurpose): DatabaseLock {
  const file = databaseSideFiles(database).lock;
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  const db = new Database(file, { timeout: 0 });
  try {
    // The journal in memory: holding the lock writes nothing, so no -journal file appears.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY')
      throw new DatabaseBusyError(busyMessage(database, purpose));
    throw err;
  }
  return { release: () => db.close() };
}

function busyMessage(database: string, purpose: LockPurpose): string {
  return purpose === 'serve'
    ? `the database ${database} is in use by another File Browser server (or a restore): one server per database`
    : `a File Browser server is running on ${database}: stop it before restoring`;
}
