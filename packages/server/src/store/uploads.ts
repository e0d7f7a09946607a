import type { Db } from './db.js';

/** A resumable upload in progress: its bytes go to `staging` until all `length` have arrived. */
export interface PendingUpload {
  id: string;
  userId: number;
  /** Virtual target path in the owner's scope: with the owner, the upload's identity (its URL). */
  path: string;
  length: number;
  override: boolean;
  /** Absolute path of the staging file. */
  staging: string;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: string;
  user_id: number;
  path: string;
  length: number;
  override: number;
  staging: string;
  created_at: number;
  updated_at: number;
}

const fromRow = (r: Row): PendingUpload => ({
  id: r.id,
  userId: r.user_id,
  path: r.path,
  length: r.length,
  override: r.override === 1,
  staging: r.staging,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Pending uploads live in the database, so an upload resumes even across a server restart. */
export class UploadsRepo {
  constructor(private readonly db: Db) {}

  /** Registers an upload, replacing (and returning) any earlier one of the same user and path. */
  put(upload: Omit<PendingUpload, 'createdAt' | 'updatedAt'>): {
    upload: PendingUpload;
    replaced?: PendingUpload;
  } {
    const replaced = this.find(upload.userId, upload.path);
    const now = Date.now();
    this.db.transaction(() => {
      if (replaced) this.db.prepare('DELETE FROM uploads WHERE id = ?').run(replaced.id);
      this.db
        .prepare(
          'INSERT INTO uploads (id, user_id, path, length, override, staging, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          upload.id,
          upload.userId,
          upload.path,
          upload.length,
          upload.override ? 1 : 0,
          upload.staging,
          now,
          now,
        );
    })();
    return { upload: { ...upload, createdAt: now, updatedAt: now }, replaced };
  }

  find(userId: number, path: string): PendingUpload | undefined {
    const row = this.db.prepare('SELECT * FROM uploads WHERE user_id = ? AND path = ?').get(userId, path) as
      Row | undefined;
    return row && fromRow(row);
  }

  touch(id: string): void {
    this.db.prepare('UPDATE uploads SET updated_at = ? WHERE id = ?').run(Date.now(), id);
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM uploads WHERE id = ?').run(id);
  }

  /** How many uploads `userId` has pending and the bytes they declare, leaving out one path's. */
  pendingOf(userId: number, exceptPath: string): { count: number; bytes: number } {
    const row = this.db
      .prepare(
        'SELECT COUNT(*) AS count, COALESCE(SUM(length), 0) AS bytes FROM uploads WHERE user_id = ? AND path <> ?',
      )
      .get(userId, exceptPath) as { count: number; bytes: number };
    return { count: row.count, bytes: row.bytes };
  }

  /** Uploads nobody has touched since `before` (Unix ms). */
  stale(before: number): PendingUpload[] {
    return (this.db.prepare('SELECT * FROM uploads WHERE updated_at < ?').all(before) as Row[]).map(fromRow);
  }

  /** Resumable uploads pending across all users (the metrics gauge). */
  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM uploads').get() as { n: number }).n;
  }

  all(): PendingUpload[] {
    return (this.db.prepare('SELECT * FROM uploads').all() as Row[]).map(fromRow);
  }
}
