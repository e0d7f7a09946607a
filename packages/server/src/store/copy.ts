import { sql as raw } from 'kysely';
import { PRIMARY_KEYS, TABLES, type Schema } from './schema.js';
import { dialectOf, type Sql } from './sql.js';

/** Tables whose ids the database hands out: PostgreSQL's sequences must follow what was copied. */
const IDENTITIES: ReadonlyArray<keyof Schema> = ['users', 'staging_files', 'audit_log', 'moves'];

/** Rows copied at a time: bounded memory for a long audit log, few round trips. */
const BATCH = 500;

export class CopyRefused extends Error {
  override name = 'CopyRefused';
}

async function count(db: Sql, table: keyof Schema): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * PostgreSQL's text holds no NUL character. SQLite's migration to NFKC username keys gave an
 * account whose key collided a key ending in NUL and its id, which no typed name produces; on
 * PostgreSQL that NUL becomes U+FFFF, a noncharacter no username may contain either.
 */
function forTarget(
  table: keyof Schema,
  row: Record<string, unknown>,
  postgres: boolean,
): Record<string, unknown> {
  if (!postgres || table !== 'users' || typeof row.username_key !== 'string') return row;
  return { ...row, username_key: row.username_key.replaceAll('\u0000', '\uffff') };
}

/**
 * Copies every row of every table from one store to another (SQLite to PostgreSQL or back), in
 * one transaction on the target: all of it or nothing. The target must hold no rows yet; the
 * counts of both are compared at the end. Answers the rows copied per table.
 */
export async function copyStore(from: Sql, to: Sql): Promise<Map<keyof Schema, number>> {
  for (const table of TABLES) {
    if ((await count(to, table)) > 0) {
      throw new CopyRefused(
        `the target is not empty (its table ${table} has rows): copy into a new database`,
      );
    }
  }
  const postgres = dialectOf(to) === 'postgres';
  const copied = new Map<keyof Schema, number>();
  await to.transaction().execute(async (tx) => {
    for (const table of TABLES) {
      let done = 0;
      const keys = PRIMARY_KEYS[table] as readonly string[];
      const tuple = raw.join(keys.map((k) => raw.ref(k)));
      let last: Record<string, unknown> | undefined;
      for (;;) {
        let query = from.selectFrom(table).selectAll();
        // Keys compare alike on both (bytes: SQLite's BINARY, PostgreSQL's "C" collation).
        if (last) {
          const after = raw.join(keys.map((k) => raw`${last![k]}`));
          query = query.where(raw<boolean>`(${tuple}) > (${after})`);
        }
        const rows = (await query
          .orderBy(raw`${tuple}`)
          .limit(BATCH)
          .execute()) as Array<Record<string, unknown>>;
        if (rows.length === 0) break;
        last = rows.at(-1);
        await tx
          .insertInto(table)
          .values(rows.map((r) => forTarget(table, r, postgres)) as never)
          .execute();
        done += rows.length;
      }
      copied.set(table, done);
    }
    if (postgres) {
      for (const table of IDENTITIES) {
        await raw`SELECT setval(pg_get_serial_sequence(${table}, 'id'), COALESCE((SELECT MAX(id) FROM ${raw.table(table)}), 0) + 1, false)`.execute(
          tx,
        );
      }
    }
  });
  for (const table of TABLES) {
    const [a, b] = [await count(from, table), await count(to, table)];
    if (a !== b) throw new Error(`the copy of ${table} has ${b} rows, the source ${a}`);
  }
  return copied;
}
