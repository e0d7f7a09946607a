import { Kysely, SqliteDialect } from 'kysely';
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

/** The query layer over an open SQLite database; destroying it closes the database. */
export function sqliteSql(db: Db): Sql {
  return new Kysely<Schema>({ dialect: new SqliteDialect({ database: db }) });
}
