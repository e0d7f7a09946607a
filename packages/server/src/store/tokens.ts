import type { Db } from './db.js';

/** A personal API token as the server keeps it: the hash of its secret, never the secret. */
export interface StoredApiToken {
  id: string;
  userId: number;
  name: string;
  /** SHA-256 of the secret part, hex. */
  secretHash: string;
  readOnly: boolean;
  /** The folder it is limited to, as a place below the root (`/a/b`); '' for the whole scope. */
  rootPath: string;
  /** Unix milliseconds. */
  createdAt: number;
  /** Unix milliseconds; 0 never expires. */
  expiresAt: number;
  /** Unix milliseconds; 0 never used. */
  lastUsedAt: number;
}

interface Row {
  id: string;
  user_id: number;
  name: string;
  secret_hash: string;
  read_only: number;
  root_path: string;
  created_at: number;
  expires_at: number;
  last_used_at: number;
}

function fromRow(row: Row): StoredApiToken {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    secretHash: row.secret_hash,
    readOnly: row.read_only !== 0,
    rootPath: row.root_path,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  };
}

/** The only module that reads or writes the api_tokens table. Rows go with their user (FK cascade). */
export class ApiTokensRepo {
  constructor(private readonly db: Db) {}

  create(token: StoredApiToken): void {
    this.db
      .prepare(
        `INSERT INTO api_tokens (id, user_id, name, secret_hash, read_only, root_path, created_at, expires_at, last_used_at)
         VALUES (@id, @userId, @name, @secretHash, @readOnly, @rootPath, @createdAt, @expiresAt, @lastUsedAt)`,
      )
      .run({ ...token, readOnly: token.readOnly ? 1 : 0 });
  }

  get(id: string): StoredApiToken | undefined {
    const row = this.db.prepare('SELECT * FROM api_tokens WHERE id = ?').get(id) as Row | undefined;
    return row && fromRow(row);
  }

  listByUser(userId: number): StoredApiToken[] {
    const rows = this.db
      .prepare('SELECT * FROM api_tokens WHERE user_id = ? ORDER BY created_at, id')
      .all(userId) as Row[];
    return rows.map(fromRow);
  }

  countByUser(userId: number): number {
    return (
      this.db.prepare('SELECT COUNT(*) AS n FROM api_tokens WHERE user_id = ?').get(userId) as { n: number }
    ).n;
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM api_tokens WHERE id = ?').run(id).changes > 0;
  }

  deleteByUser(userId: number): void {
    this.db.prepare('DELETE FROM api_tokens WHERE user_id = ?').run(userId);
  }

  /** Records a use; only moves forward, so concurrent requests cannot set it back. */
  touch(id: string, at: number): void {
    this.db
      .prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND last_used_at < ?')
      .run(at, id, at);
  }
}
