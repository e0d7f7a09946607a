import crypto from 'node:crypto';
import type { Db } from './db.js';

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
  constructor(private readonly db: Db) {}

  add(shareHash: string, token: string, expiresAt: number, now = Date.now()): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM share_grants WHERE expires_at <= ?').run(now);
      this.db
        .prepare('INSERT INTO share_grants (token_hash, share_hash, expires_at) VALUES (?, ?, ?)')
        .run(hashOf(token), shareHash, expiresAt);
      this.db
        .prepare(
          `DELETE FROM share_grants WHERE share_hash = ? AND token_hash NOT IN (
             SELECT token_hash FROM share_grants WHERE share_hash = ? ORDER BY expires_at DESC LIMIT ?)`,
        )
        .run(shareHash, shareHash, MAX_GRANTS_PER_SHARE);
    })();
  }

  /** Whether `token` is a live grant of the link `shareHash`. */
  has(shareHash: string, token: string, now = Date.now()): boolean {
    return (
      this.db
        .prepare('SELECT 1 FROM share_grants WHERE token_hash = ? AND share_hash = ? AND expires_at > ?')
        .get(hashOf(token), shareHash, now) !== undefined
    );
  }
}
