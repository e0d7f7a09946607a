import type { AuditAction } from '@filebrowser/contract';
import type { Expression, ExpressionBuilder, Selectable, SqlBool } from 'kysely';
import type { AuditLogTable, Schema } from './schema.js';
import type { Sql } from './sql.js';

/** One audit record as written. Times are Unix milliseconds. */
export interface AuditRecord {
  time: number;
  userId: number;
  username: string;
  address: string;
  action: AuditAction;
  path: string;
  destination: string;
  status: number;
  detail: string;
}

export interface StoredAuditRecord extends AuditRecord {
  id: number;
}

/** What a listing or an export selects; every field is optional. */
export interface AuditFilter {
  username?: string;
  action?: string;
  /** A path and what is below it, as source or destination. */
  pathPrefix?: string;
  /** Times: `from` included, `to` excluded. */
  from?: number;
  to?: number;
  /** Only records older than this id (the paging cursor). */
  beforeId?: number;
}

const fromRow = (r: Selectable<AuditLogTable>): StoredAuditRecord => ({
  id: Number(r.id),
  time: r.time,
  userId: r.user_id,
  username: r.username,
  address: r.address,
  action: r.action as AuditAction,
  path: r.path,
  destination: r.destination,
  status: r.status,
  detail: r.detail,
});

/**
 * `path = p OR path BETWEEN p/ and p0`: "0" follows "/" in bytewise order (SQLite's, and the
 * "C" collation every text has on PostgreSQL), so the range is exactly what lies below `p`, and
 * the path index answers it (LIKE would not).
 */
function below(
  eb: ExpressionBuilder<Schema, 'audit_log'>,
  column: 'path' | 'destination',
  prefix: string,
): Expression<SqlBool> {
  const base = prefix.replace(/\/+$/, '');
  if (base === '') return eb(column, '>=', '/');
  return eb.or([eb(column, '=', base), eb.and([eb(column, '>=', base + '/'), eb(column, '<', base + '0')])]);
}

/** The audit log's records (audit/log.ts writes them in batches). */
export class AuditRepo {
  constructor(private readonly sql: Sql) {}

  /** Writes records in one statement: one fsync for a whole batch. */
  async insertMany(records: readonly AuditRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.sql
      .insertInto('audit_log')
      .values(
        records.map((r) => ({
          time: r.time,
          user_id: r.userId,
          username: r.username,
          address: r.address,
          action: r.action,
          path: r.path,
          destination: r.destination,
          status: r.status,
          detail: r.detail,
        })),
      )
      .execute();
  }

  /** Up to `limit` records, newest first. */
  async list(filter: AuditFilter, limit: number): Promise<StoredAuditRecord[]> {
    let query = this.sql.selectFrom('audit_log').selectAll();
    if (filter.username !== undefined) query = query.where('username', '=', filter.username);
    if (filter.action !== undefined) query = query.where('action', '=', filter.action);
    const prefix = filter.pathPrefix;
    if (prefix !== undefined) {
      query = query.where((eb) => eb.or([below(eb, 'path', prefix), below(eb, 'destination', prefix)]));
    }
    if (filter.from !== undefined) query = query.where('time', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('time', '<', filter.to);
    if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
    return (await query.orderBy('id', 'desc').limit(limit).execute()).map(fromRow);
  }

  /**
   * Removes up to `max` records made before `time`; answers how many went. Callers loop, so that
   * a long-unpurged log does not hold the database for one long statement.
   */
  async deleteBefore(time: number, max: number): Promise<number> {
    const result = await this.sql
      .deleteFrom('audit_log')
      .where(
        'id',
        'in',
        this.sql.selectFrom('audit_log').select('id').where('time', '<', time).orderBy('time').limit(max),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
