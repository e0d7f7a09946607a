import crypto from 'node:crypto';
import { inTransaction, type Sql } from './sql.js';

/** Grants one link keeps at most: the oldest go first (each is a correct password, typed again). */
export const MAX_GRANTS_PER_SHARE = 1000;

function hashOf(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('base64url');
}

/**
 * The tokens a correct share password earned, until they expire or the link goes (a foreign key
 * removes them with it). Only the SHA-256 of each token is stored: the token carries 256 random
 * bits, and nothing in the database lets anyone make one.
 */
export class ShareGrantsRepo {
  constructor(private readonly sql: Sql) {}

  async add(shareHash: string, token: string, expiresAt: number, now = Date.now()): Promise<void> {
    await inTransaction(this.sql, async (tx) => {
      await tx.deleteFrom('share_grants').where('expires_at', '<=', now).execute();
      await tx
        .insertInto('share_grants')
        .values({ token_hash: hashOf(token), share_hash: shareHash, expires_at: expiresAt })
        .execute();
      await tx
        .deleteFrom('share_grants')
        .where('share_hash', '=', shareHash)
        .where(
          'token_hash',
          'not in',
          tx
            .selectFrom('share_grants')
            .select('token_hash')
            .where('share_hash', '=', shareHash)
            .orderBy('expires_at', 'desc')
            .limit(MAX_GRANTS_PER_SHARE),
        )
        .execute();
    });
  }

  /** Whether `token` is a live grant of the link `shareHash`. */
  async has(shareHash: string, token: string, now = Date.now()): Promise<boolean> {
    const row = await this.sql
      .selectFrom('share_grants')
      .select('token_hash')
      .where('token_hash', '=', hashOf(token))
      .where('share_hash', '=', shareHash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row !== undefined;
  }
}
