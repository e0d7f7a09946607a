import { sql } from 'kysely';
import type { TrashTable } from './schema.js';
import type { Sql } from './sql.js';

/** One item in a user's trash, as stored. Times are Unix milliseconds. */
export interface StoredTrashItem {
  id: string;
  /** Whose trash holds it. */
  userId: number;
  /** The root it was deleted from (see files/access.ts `FileRoot`). */
  rootId: string;
  /** Where it was below that root (`/a/b`, as shares' root_path): where a restore puts it back. */
  rootPath: string;
  /** Where it was in its owner's scope when it was deleted (what the trash screen shows). */
  path: string;
  size: number;
  isDir: boolean;
  /** Username of who deleted it. */
  deletedBy: string;
  deletedAt: number;
  /** Its folder in the trash, relative to the trash folder (`<userId>/<itemId>`). */
  location: string;
}

const fromRow = (r: TrashTable): StoredTrashItem => ({
  id: r.id,
  userId: r.user_id,
  rootId: r.root_id,
  rootPath: r.root_path,
  path: r.path,
  size: r.size,
  isDir: r.is_dir !== 0,
  deletedBy: r.deleted_by,
  deletedAt: r.deleted_at,
  location: r.location,
});

/** Records of the trash; the bytes are in the trash folder (files/trash.ts). */
export class TrashRepo {
  constructor(private readonly sql: Sql) {}

  async add(item: StoredTrashItem): Promise<void> {
    await this.sql
      .insertInto('trash')
      .values({
        id: item.id,
        user_id: item.userId,
        root_id: item.rootId,
        root_path: item.rootPath,
        path: item.path,
        size: item.size,
        is_dir: item.isDir ? 1 : 0,
        deleted_by: item.deletedBy,
        deleted_at: item.deletedAt,
        location: item.location,
      })
      .execute();
  }

  async get(id: string): Promise<StoredTrashItem | undefined> {
    const row = await this.sql.selectFrom('trash').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  /** A user's items, newest first. */
  async list(userId: number): Promise<StoredTrashItem[]> {
    const rows = await this.sql
      .selectFrom('trash')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('deleted_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(fromRow);
  }

  /** Items deleted before `time` (every user's), oldest first. */
  async deletedBefore(time: number): Promise<StoredTrashItem[]> {
    const rows = await this.sql
      .selectFrom('trash')
      .selectAll()
      .where('deleted_at', '<', time)
      .orderBy('deleted_at')
      .execute();
    return rows.map(fromRow);
  }

  /** Every user with something in the trash. */
  async userIds(): Promise<number[]> {
    const rows = await this.sql.selectFrom('trash').select('user_id').distinct().orderBy('user_id').execute();
    return rows.map((r) => r.user_id);
  }

  /** Items deleted from `place` of a root or below it at `since` or later. */
  async deletedBelowSince(rootId: string, place: string, since: number): Promise<StoredTrashItem[]> {
    const prefix = place === '/' ? '/' : place + '/';
    const rows = await this.sql
      .selectFrom('trash')
      .selectAll()
      .where('root_id', '=', rootId)
      .where('deleted_at', '>=', since)
      .where((eb) =>
        eb.or([eb('root_path', '=', place), eb(sql`substr(root_path, 1, ${prefix.length})`, '=', prefix)]),
      )
      .execute();
    return rows.map(fromRow);
  }

  /** What an item holds, measured again. */
  async setSize(id: string, size: number): Promise<void> {
    await this.sql.updateTable('trash').set({ size }).where('id', '=', id).execute();
  }

  /** Bytes of the items deleted from `place` of a root or below it (`/` for the whole root). */
  async bytesBelow(rootId: string, place: string): Promise<number> {
    const prefix = place === '/' ? '/' : place + '/';
    const row = await this.sql
      .selectFrom('trash')
      .select(sql<number>`COALESCE(SUM(size), 0)`.as('bytes'))
      .where('root_id', '=', rootId)
      .where((eb) =>
        eb.or([eb('root_path', '=', place), eb(sql`substr(root_path, 1, ${prefix.length})`, '=', prefix)]),
      )
      .executeTakeFirstOrThrow();
    return Number(row.bytes);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.sql.deleteFrom('trash').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
