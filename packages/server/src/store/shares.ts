import type { Db } from './db.js';

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
  userId: number;
  /** Unix seconds; 0 means the link never expires. */
  expire: number;
  /** bcrypt hash of the password, "" when the link has none. */
  passwordHash: string;
  createdAt: number;
}

interface Row {
  hash: string;
  path: string;
  root_id: string;
  root_path: string;
  user_id: number;
  expire: number;
  password_hash: string;
  created_at: number;
}

const fromRow = (r: Row): StoredShare => ({
  hash: r.hash,
  path: r.path,
  rootId: r.root_id,
  rootPath: r.root_path,
  userId: r.user_id,
  expire: r.expire,
  passwordHash: r.password_hash,
  createdAt: r.created_at,
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Share links. Expired links are deleted before every read, so none is ever served. */
export class SharesRepo {
  constructor(private readonly db: Db) {}

  private purgeExpired(): void {
    this.db.prepare('DELETE FROM shares WHERE expire != 0 AND expire <= ?').run(nowSeconds());
  }

  create(share: Omit<StoredShare, 'createdAt'>): StoredShare {
    const created = { ...share, createdAt: Date.now() };
    this.db
      .prepare(
        'INSERT INTO shares (hash, path, root_id, root_path, user_id, expire, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        created.hash,
        created.path,
        created.rootId,
        created.rootPath,
        created.userId,
        created.expire,
        created.passwordHash,
        created.createdAt,
      );
    return created;
  }

  get(hash: string): StoredShare | undefined {
    this.purgeExpired();
    const row = this.db.prepare('SELECT * FROM shares WHERE hash = ?').get(hash) as Row | undefined;
    return row && fromRow(row);
  }

  /** All live shares, by owner then expiry (as File Browser lists them). */
  list(userId?: number): StoredShare[] {
    this.purgeExpired();
    const rows =
      userId === undefined
        ? this.db.prepare('SELECT * FROM shares ORDER BY user_id, expire, created_at').all()
        : this.db.prepare('SELECT * FROM shares WHERE user_id = ? ORDER BY expire, created_at').all(userId);
    return (rows as Row[]).map(fromRow);
  }

  /** The shared item moved: its owner's path and its place below the root. */
  move(hash: string, path: string, rootPath: string): void {
    this.db.prepare('UPDATE shares SET path = ?, root_path = ? WHERE hash = ?').run(path, rootPath, hash);
  }

  delete(hash: string): boolean {
    return this.db.prepare('DELETE FROM shares WHERE hash = ?').run(hash).changes > 0;
  }

  deleteByUser(userId: number): void {
    this.db.prepare('DELETE FROM shares WHERE user_id = ?').run(userId);
  }
}
