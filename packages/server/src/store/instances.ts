import { sql } from 'kysely';
import { dialectOf, type Sql } from './sql.js';

/** A running server on this database. */
export interface InstanceRecord {
  id: string;
  host: string;
  pid: number;
  startedAt: number;
  /** When it last said it was running (its heartbeat). */
  seenAt: number;
}

/**
 * The servers running on this database. Each registers at start and beats while it serves; one
 * that stopped beating has died, and what it left in progress (moves, staging files) is finished
 * or undone by another (instance.ts).
 */
export class InstancesRepo {
  constructor(private readonly sql: Sql) {}

  /**
   * The time every instance on the database agrees on, in Unix milliseconds: the database's
   * clock on PostgreSQL (the hosts' clocks may differ by more than an instance may stay silent),
   * this host's on a SQLite file (one process holds it).
   */
  async now(): Promise<number> {
    if (dialectOf(this.sql) !== 'postgres') return Date.now();
    const { rows } = await sql<{
      ms: string | number;
    }>`SELECT floor(extract(epoch from clock_timestamp()) * 1000) AS ms`.execute(this.sql);
    return Number(rows[0]!.ms);
  }

  /** Since when the database has been running (0 on a SQLite file: it is this process's). */
  async upSince(): Promise<number> {
    if (dialectOf(this.sql) !== 'postgres') return 0;
    const { rows } = await sql<{
      ms: string | number;
    }>`SELECT floor(extract(epoch from pg_postmaster_start_time()) * 1000) AS ms`.execute(this.sql);
    return Number(rows[0]!.ms);
  }

  async register(record: InstanceRecord): Promise<void> {
    await this.sql
      .insertInto('instances')
      .values({
        id: record.id,
        host: record.host,
        pid: record.pid,
        started_at: record.startedAt,
        seen_at: record.seenAt,
      })
      .execute();
  }

  /** Records a heartbeat; false when the instance is no longer registered (another took it for dead). */
  async beat(id: string, now: number): Promise<boolean> {
    const result = await this.sql
      .updateTable('instances')
      .set({ seen_at: now })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async list(): Promise<InstanceRecord[]> {
    const rows = await this.sql.selectFrom('instances').selectAll().orderBy('started_at').execute();
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: Number(r.pid),
      startedAt: r.started_at,
      seenAt: r.seen_at,
    }));
  }

  async remove(id: string): Promise<void> {
    await this.sql.deleteFrom('instances').where('id', '=', id).execute();
  }
}
