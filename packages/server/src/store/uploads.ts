import { sql } from 'kysely';
import type { UploadsTable } from './schema.js';
import { inTransaction, type Sql } from './sql.js';

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

const fromRow = (r: UploadsTable): PendingUpload => ({
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
  constructor(private readonly sql: Sql) {}

  /** Registers an upload, replacing (and returning) any earlier one of the same user and path. */
  async put(upload: Omit<PendingUpload, 'createdAt' | 'updatedAt'>): Promise<{
    upload: PendingUpload;
    replaced?: PendingUpload;
  }> {
    const now = Date.now();
    return inTransaction(this.sql, async (tx) => {
      const replaced = await new UploadsRepo(tx).find(upload.userId, upload.path);
      if (replaced) await tx.deleteFrom('uploads').where('id', '=', replaced.id).execute();
      await tx
        .insertInto('uploads')
        .values({
          id: upload.id,
          user_id: upload.userId,
          path: upload.path,
          length: upload.length,
          override: upload.override ? 1 : 0,
          staging: upload.staging,
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { upload: { ...upload, createdAt: now, updatedAt: now }, replaced };
    });
  }

  async find(userId: number, path: string): Promise<PendingUpload | undefined> {
    const row = await this.sql
      .selectFrom('uploads')
      .selectAll()
      .where('user_id', '=', userId)
      .where('path', '=', path)
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async touch(id: string): Promise<void> {
    await this.sql.updateTable('uploads').set({ updated_at: Date.now() }).where('id', '=', id).execute();
  }

  /** Which of `ids` are uploads still pending. */
  async pendingAmong(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.sql.selectFrom('uploads').select('id').where('id', 'in', ids).execute();
    return new Set(rows.map((r) => r.id));
  }

  async delete(id: string): Promise<void> {
    await this.sql.deleteFrom('uploads').where('id', '=', id).execute();
  }

  /** How many uploads `userId` has pending and the bytes they declare, leaving out one path's. */
  async pendingOf(userId: number, exceptPath: string): Promise<{ count: number; bytes: number }> {
    const row = await this.sql
      .selectFrom('uploads')
      .select((eb) => [
        eb.fn.countAll<number>().as('count'),
        sql<number>`COALESCE(SUM(length), 0)`.as('bytes'),
      ])
      .where('user_id', '=', userId)
      .where('path', '<>', exceptPath)
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), bytes: Number(row.bytes) };
  }

  /** Uploads nobody has touched since `before` (Unix ms). */
  async stale(before: number): Promise<PendingUpload[]> {
    return (await this.sql.selectFrom('uploads').selectAll().where('updated_at', '<', before).execute()).map(
      fromRow,
    );
  }

  /** Resumable uploads pending across all users (the metrics gauge). */
  async count(): Promise<number> {
    const row = await this.sql
      .selectFrom('uploads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async all(): Promise<PendingUpload[]> {
    return (await this.sql.selectFrom('uploads').selectAll().execute()).map(fromRow);
  }
}

/**
 * Resumable uploads being created on any instance: past the per-user limits' check, not yet
 * recorded (uploads/limits.ts). Each row names its instance: a dead one's are forgotten.
 */
export class UploadCreationsRepo {
  constructor(
    private readonly sql: Sql,
    private readonly instance: string,
  ) {}

  async add(id: string, userId: number, bytes: number): Promise<void> {
    await this.sql
      .insertInto('upload_creations')
      .values({ id, user_id: userId, bytes, instance: this.instance })
      .execute();
  }

  /** How many uploads of the user are being created, and how many bytes they declare. */
  async of(userId: number): Promise<{ count: number; bytes: number }> {
    const row = await this.sql
      .selectFrom('upload_creations')
      .select((eb) => [
        eb.fn.countAll<number>().as('count'),
        sql<number>`COALESCE(SUM(bytes), 0)`.as('bytes'),
      ])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), bytes: Number(row.bytes) };
  }

  async remove(id: string): Promise<void> {
    await this.sql.deleteFrom('upload_creations').where('id', '=', id).execute();
  }

  /** Forgets the creations of instances not in `live` (gone, their requests with them). */
  async forgetInstancesBut(live: readonly string[]): Promise<void> {
    let query = this.sql.deleteFrom('upload_creations');
    if (live.length > 0) query = query.where('instance', 'not in', live);
    await query.execute();
  }
}
