import type { SharesTable } from './schema.js';
import type { Sql } from './sql.js';

export interface StoredShare {
  hash: string;
  /**
   * Virtual path inside the owner's scope as the owner named it (what clients are shown); a
   * trailing "/" marks a folder share.
   */
  path: string;
  /** The root the shared item is in (see files/access.ts `FileRoot`). */
  rootId: string;
  /**
   * Where the shared item is below that root (its real place when it was shared through a link):
   * what the link serves, whatever the owner's scope becomes (a trailing "/" for folders).
   */
  rootPath: string;
  /**
   * The identity of the shared item (files/access/identity.ts): the link serves only that very
   * object, never another one that later takes its place. "" until the first open of a link made
   * before identities were recorded.
   */
  itemId: string;
  userId: number;
  /** Unix seconds; 0 means the link never expires. */
  expire: number;
  /** bcrypt hash of the password, "" when the link has none. */
  passwordHash: string;
  createdAt: number;
}

const fromRow = (r: SharesTable): StoredShare => ({
  hash: r.hash,
  path: r.path,
  rootId: r.root_id,
  rootPath: r.root_path,
  itemId: r.item_id,
  userId: r.user_id,
  expire: r.expire,
  passwordHash: r.password_hash,
  createdAt: r.created_at,
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Share links. Expired links are deleted before every read, so none is ever served. */
export class SharesRepo {
  constructor(private readonly sql: Sql) {}

  private async purgeExpired(): Promise<void> {
    await this.sql
      .deleteFrom('shares')
      .where('expire', '!=', 0)
      .where('expire', '<=', nowSeconds())
      .execute();
  }

  async create(share: Omit<StoredShare, 'createdAt'>): Promise<StoredShare> {
    const created = { ...share, createdAt: Date.now() };
    await this.sql
      .insertInto('shares')
      .values({
        hash: created.hash,
        path: created.path,
        root_id: created.rootId,
        root_path: created.rootPath,
        item_id: created.itemId,
        user_id: created.userId,
        expire: created.expire,
        password_hash: created.passwordHash,
        created_at: created.createdAt,
      })
      .execute();
    return created;
  }

  async get(hash: string): Promise<StoredShare | undefined> {
    await this.purgeExpired();
    const row = await this.sql.selectFrom('shares').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row && fromRow(row);
  }

  /** All live shares, by owner then expiry (as File Browser lists them). */
  async list(userId?: number): Promise<StoredShare[]> {
    await this.purgeExpired();
    const rows =
      userId === undefined
        ? await this.sql
            .selectFrom('shares')
            .selectAll()
            .orderBy('user_id')
            .orderBy('expire')
            .orderBy('created_at')
            .execute()
        : await this.sql
            .selectFrom('shares')
            .selectAll()
            .where('user_id', '=', userId)
            .orderBy('expire')
            .orderBy('created_at')
            .execute();
    return rows.map(fromRow);
  }

  /** The shared item moved: its owner's path, its place below the root and its identity. */
  async move(hash: string, path: string, rootPath: string, itemId: string): Promise<void> {
    await this.sql
      .updateTable('shares')
      .set({ path, root_path: rootPath, item_id: itemId })
      .where('hash', '=', hash)
      .execute();
  }

  /** Records the item of a link made before identities were (only while none is recorded). */
  async recordItem(hash: string, itemId: string): Promise<void> {
    await this.sql
      .updateTable('shares')
      .set({ item_id: itemId })
      .where('hash', '=', hash)
      .where('item_id', '=', '')
      .execute();
  }

  /** The server replaced a shared file's bytes (a new object, see files/change/replace.ts). */
  async replaceItem(replaced: string, placed: string, rootPath: string): Promise<void> {
    await this.sql
      .updateTable('shares')
      .set({ item_id: placed })
      .where('item_id', '=', replaced)
      .where('root_path', '=', rootPath)
      .execute();
  }

  async delete(hash: string): Promise<boolean> {
    const result = await this.sql.deleteFrom('shares').where('hash', '=', hash).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteByUser(userId: number): Promise<void> {
    await this.sql.deleteFrom('shares').where('user_id', '=', userId).execute();
  }
}
