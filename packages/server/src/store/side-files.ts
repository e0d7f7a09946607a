/**
 * The files the server keeps beside its database, named after it. Each holds what the database
 * holds (or decides who may write it), so each is as private as the database: the served-folder
 * rules hide them all (files/private.ts) and none is ever made readable by other accounts.
 */
export function databaseSideFiles(database: string) {
  return {
    wal: `${database}-wal`,
    shm: `${database}-shm`,
    journal: `${database}-journal`,
    /** Held by a running server, so that a restore cannot swap the file under it (server-lock.ts). */
    lock: `${database}.lock`,
    /** A restore's copy while it is checked, before it takes the database's place. */
    restoring: `${database}.restoring`,
    /** The database a restore replaced, kept until the next restore. */
    beforeRestore: `${database}.before-restore`,
  };
}

/** Every side file, including the -wal, -shm and -journal a replaced database may have kept. */
export function allDatabaseSideFiles(database: string): string[] {
  const s = databaseSideFiles(database);
  return [
    s.wal,
    s.shm,
    s.journal,
    s.lock,
    s.restoring,
    s.beforeRestore,
    `${s.beforeRestore}-wal`,
    `${s.beforeRestore}-shm`,
    `${s.beforeRestore}-journal`,
  ];
}
