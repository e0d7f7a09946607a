import type { Db } from './db.js';

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

interface Row {
  id: string;
  user_id: number;
  root_id: string;
  root_path: string;
  path: string;
  size: number;
  is_dir: number;
  deleted_by: string;
  deleted_at: number;
  location: string;
}

const fromRow = (r: Row): StoredTrashItem => ({
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
  constructor(private readonly db: Db) {}

  add(item: StoredTrashItem): void {
    this.db
      .prepare(
        `INSERT INTO trash (id, user_id, root_id, root_path, path, size, is_dir, deleted_by, deleted_at, location)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        item.id,
        item.userId,
        item.rootId,
        item.rootPath,
        item.path,
        item.size,
        item.isDir ? 1 : 0,
        item.deletedBy,
        item.deletedAt,
        item.location,
      );
  }

  get(id: string): StoredTrashItem | undefined {
    const row = this.db.prepare('SELECT * FROM trash WHERE id = ?').get(id) as Row | undefined;
    return row && fromRow(row);
  }

  /** A user's items, newest first. */
  list(userId: number): StoredTrashItem[] {
    const rows = this.db
      .prepare('SELECT * FROM trash WHERE user_id = ? ORDER BY deleted_at DESC, id')
      .all(userId) as Row[];
    return rows.map(fromRow);
  }

  /** Items deleted before `time` (every user's), oldest first. */
  deletedBefore(time: number): StoredTrashItem[] {
    const rows = this.db
      .prepare('SELECT * FROM trash WHERE deleted_at < ? ORDER BY deleted_at')
      .all(time) as Row[];
    return rows.map(fromRow);
  }

  /** Every user with something in the trash. */
  userIds(): number[] {
    const rows = this.db.prepare('SELECT DISTINCT user_id FROM trash ORDER BY user_id').all() as {
      user_id: number;
    }[];
    return rows.map((r) => r.user_id);
  }

  /** Bytes of the items deleted from `place` of a root or below it (`/` for the whole root). */
  bytesBelow(rootId: string, place: string): number {
    const prefix = place === '/' ? '/' : place + '/';
    const row = this.db
      .prepare(
        `SELECT COALESCE(SUM(size), 0) AS bytes FROM trash
         WHERE root_id = ? AND (root_path = ? OR substr(root_path, 1, length(?)) = ?)`,
      )
      .get(rootId, place, prefix, prefix) as { bytes: number };
    return row.bytes;
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM trash WHERE id = ?').run(id).changes > 0;
  }
}
