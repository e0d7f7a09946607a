import { sql } from 'kysely';
import type { Sql } from './sql.js';

/** One key's attempts in its current window. */
export interface AttemptWindow {
  count: number;
  resetAt: number;
}

/**
 * Attempts counted in fixed windows, per kind of counter (`kind`) and key, in the database: what
 * the throttles of several instances on one database count together (auth/rate-limit.ts).
 */
export class AttemptsRepo {
  constructor(private readonly sql: Sql) {}

  /** Counts one attempt, in one statement (parallel takes never lose one). */
  async take(kind: string, key: string, windowMs: number, now: number): Promise<AttemptWindow> {
    const row = await this.sql
      .insertInto('attempts')
      .values({ kind, key, count: 1, reset_at: now + windowMs })
      .onConflict((oc) =>
        oc.columns(['kind', 'key']).doUpdateSet({
          count: sql<number>`CASE WHEN attempts.reset_at <= ${now} THEN 1 ELSE attempts.count + 1 END`,
          reset_at: sql<number>`CASE WHEN attempts.reset_at <= ${now} THEN ${now + windowMs} ELSE attempts.reset_at END`,
        }),
      )
      .returning(['count', 'reset_at'])
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), resetAt: Number(row.reset_at) };
  }

  /** The key's window, when one is running at `now`. */
  async get(kind: string, key: string, now: number): Promise<AttemptWindow | undefined> {
    const row = await this.sql
      .selectFrom('attempts')
      .select(['count', 'reset_at'])
      .where('kind', '=', kind)
      .where('key', '=', key)
      .where('reset_at', '>', now)
      .executeTakeFirst();
    return row && { count: Number(row.count), resetAt: Number(row.reset_at) };
  }

  /** Takes `n` attempts back (never below zero). */
  async give(kind: string, key: string, n: number, now: number): Promise<void> {
    await this.sql
      .updateTable('attempts')
      .set({ count: sql<number>`CASE WHEN count > ${n} THEN count - ${n} ELSE 0 END` })
      .where('kind', '=', kind)
      .where('key', '=', key)
      .where('reset_at', '>', now)
      .execute();
  }

  /**
   * Forgets the key; answers how many attempts its running window had. One statement: an attempt
   * counted by another instance between a read and a delete would be forgotten uncounted.
   */
  async clear(kind: string, key: string, now: number): Promise<number> {
    const row = await this.sql
      .deleteFrom('attempts')
      .where('kind', '=', kind)
      .where('key', '=', key)
      .returning(['count', 'reset_at'])
      .executeTakeFirst();
    return row && Number(row.reset_at) > now ? Number(row.count) : 0;
  }

  /** Forgets the windows that ended. */
  async sweep(now: number): Promise<void> {
    await this.sql.deleteFrom('attempts').where('reset_at', '<=', now).execute();
  }
}
