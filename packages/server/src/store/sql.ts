import { Kysely, PostgresAdapter, SqliteDialect, sql as raw } from 'kysely';
import type { Db } from './db.js';
import type { Schema } from './schema.js';

/**
 * The one way repositories reach the database: Kysely over better-sqlite3 (the embedded
 * default) or over `pg` (PostgreSQL, several instances). Every query is a promise on both, so
 * a repository is written once; on SQLite the calls underneath stay synchronous and are taken
 * one at a time, a transaction holding the connection until it ends.
 */
export type Sql = Kysely<Schema>;

export type Dialect = 'sqlite' | 'postgres';

/** Whether a `--database` value names PostgreSQL (a URL) rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/** The query layer over an open SQLite database; destroying it closes the database. */
export function sqliteSql(db: Db): Sql {
  return new Kysely<Schema>({ dialect: new SqliteDialect({ database: db }) });
}

/** Which database `sql` (or a transaction on it) speaks. */
export function dialectOf(sql: Sql): Dialect {
  return sql.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** A UNIQUE or PRIMARY KEY constraint refused a row, in either database. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * After a row was inserted with an id of its own (an import keeping ids): PostgreSQL's
 * identity sequence does not see it and would hand the same id out again; SQLite's does.
 */
export async function afterExplicitId(sql: Sql, table: 'users'): Promise<void> {
  if (dialectOf(sql) !== 'postgres') return;
  await raw`SELECT setval(pg_get_serial_sequence(${table}, 'id'), (SELECT MAX(id) FROM ${raw.table(table)}))`.execute(
    sql,
  );
}

/** Runs `work` in a transaction on `sql`, or within the one `sql` already is. */
export async function inTransaction<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  if (sql.isTransaction) return work(sql);
  return sql.transaction().execute(work);
}
