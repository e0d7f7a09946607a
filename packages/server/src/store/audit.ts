import type { AuditAction } from '@filebrowser/contract';
import type { Db } from './db.js';

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

interface Row {
  id: number;
  time: number;
  user_id: number;
  username: string;
  address: string;
  action: string;
  path: string;
  destination: string;
  status: number;
  detail: string;
}

const fromRow = (r: Row): StoredAuditRecord => ({
  id: r.id,
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
 * `path = p OR path BETWEEN p/ and p0`: "0" follows "/" in every collation SQLite uses, so the
 * range is exactly what lies below `p`, and the path index answers it (LIKE would not).
 */
function pathCondition(column: string, prefix: string, params: unknown[]): string {
  const base = prefix.replace(/\/+$/, '');
  if (base === '') {
    params.push('/');
    return `${column} >= ?`;
  }
  params.push(base, base + '/', base + '0');
  return `(${column} = ? OR (${column} >= ? AND ${column} < ?))`;
}

/** The audit log's records (audit/log.ts writes them in batches). */
export class AuditRepo {
  constructor(private readonly db: Db) {}

  /** Writes records in one transaction: one fsync for a whole batch. */
  insertMany(records: readonly AuditRecord[]): void {
    const insert = this.db.prepare(
      `INSERT INTO audit_log (time, user_id, username, address, action, path, destination, status, detail)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      for (const r of records) {
        insert.run(
          r.time,
          r.userId,
          r.username,
          r.address,
          r.action,
          r.path,
          r.destination,
          r.status,
          r.detail,
        );
      }
    })();
  }

  /** Up to `limit` records, newest first. */
  list(filter: AuditFilter, limit: number): StoredAuditRecord[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.username !== undefined) {
      where.push('username = ?');
      params.push(filter.username);
    }
    if (filter.action !== undefined) {
      where.push('action = ?');
      params.push(filter.action);
    }
    if (filter.pathPrefix !== undefined) {
      where.push(
        `(${pathCondition('path', filter.pathPrefix, params)} OR ${pathCondition('destination', filter.pathPrefix, params)})`,
      );
    }
    if (filter.from !== undefined) {
      where.push('time >= ?');
      params.push(filter.from);
    }
    if (filter.to !== undefined) {
      where.push('time < ?');
      params.push(filter.to);
    }
    if (filter.beforeId !== undefined) {
      where.push('id < ?');
      params.push(filter.beforeId);
    }
    const sql = `SELECT * FROM audit_log ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...params, limit) as Row[]).map(fromRow);
  }

  /**
   * Removes up to `max` records made before `time`; answers how many went. Callers loop, so that
   * a long-unpurged log does not hold the database for one long statement.
   */
  deleteBefore(time: number, max: number): number {
    return this.db
      .prepare(
        'DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE time < ? ORDER BY time LIMIT ?)',
      )
      .run(time, max).changes;
  }
}
