import type { ApiTokensTable } from './schema.js';
import type { Sql } from './sql.js';

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

function fromRow(row: ApiTokensTable): StoredApiToken {
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
  constructor(private readonly sql: Sql) {}

  async create(token: StoredApiToken): Promise<void> {
    await this.sql
      .insertInto('api_tokens')
      .values({
        id: token.id,
        user_id: token.userId,
        name: token.name,
        secret_hash: token.secretHash,
        read_only: token.readOnly ? 1 : 0,
        root_path: token.rootPath,
        created_at: token.createdAt,
        expires_at: token.expiresAt,
        last_used_at: token.lastUsedAt,
      })
      .execute();
  }

  async get(id: string): Promise<StoredApiToken | undefined> {
    const row = await this.sql.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async listByUser(userId: number): Promise<StoredApiToken[]> {
    const rows = await this.sql
      .selectFrom('api_tokens')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(fromRow);
  }

  async countByUser(userId: number): Promise<number> {
    const row = await this.sql
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Deletes a token of `userId` (one statement: nobody else's token, whatever the id). */
  async delete(id: string, userId: number): Promise<boolean> {
    const result = await this.sql
      .deleteFrom('api_tokens')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteByUser(userId: number): Promise<void> {
    await this.sql.deleteFrom('api_tokens').where('user_id', '=', userId).execute();
  }

  /** Records a use; only moves forward, so concurrent requests cannot set it back. */
  async touch(id: string, at: number): Promise<void> {
    await this.sql
      .updateTable('api_tokens')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where('last_used_at', '<', at)
      .execute();
  }
}
