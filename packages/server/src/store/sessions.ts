import crypto from 'node:crypto';
import type { Db } from './db.js';

export interface Session {
  /** The secret the session's token carries: never stored, only its hash (`hashOf`). */
  id: string;
  userId: number;
  createdAt: number;
  expiresAt: number;
}

/** What is stored of a session's secret: a copy of the database names no session a token could carry. */
function hashOf(id: string): string {
  return crypto.createHash('sha256').update(id, 'utf8').digest('base64url');
}

/**
 * Server-side sessions: a token is only as valid as its row here. Rows are found by the SHA-256
 * of the session's secret (192 random bits, so a fast hash is enough), never by the secret.
 */
export class SessionsRepo {
  constructor(private readonly db: Db) {}

  create(userId: number, lifetimeSeconds: number): Session {
    const now = Date.now();
    const session = {
      id: crypto.randomBytes(24).toString('base64url'),
      userId,
      createdAt: now,
      expiresAt: now + lifetimeSeconds * 1000,
    };
    this.db
      .prepare('INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
      .run(hashOf(session.id), session.userId, session.createdAt, session.expiresAt);
    return session;
  }

  /** The live session whose secret is `id`, or undefined when revoked or expired. */
  get(id: string): Session | undefined {
    const row = this.db
      .prepare('SELECT user_id, created_at, expires_at FROM sessions WHERE id_hash = ? AND expires_at > ?')
      .get(hashOf(id), Date.now()) as { user_id: number; created_at: number; expires_at: number } | undefined;
    return row && { id, userId: row.user_id, createdAt: row.created_at, expiresAt: row.expires_at };
  }

  revoke(id: string): void {
    this.db.prepare('DELETE FROM sessions WHERE id_hash = ?').run(hashOf(id));
  }

  revokeUser(userId: number, exceptId?: string): void {
    this.db
      .prepare('DELETE FROM sessions WHERE user_id = ? AND id_hash != ?')
      .run(userId, exceptId === undefined ? '' : hashOf(exceptId));
  }

  /** Sessions not yet expired or revoked (the metrics gauge). */
  countLive(): number {
    return (
      this.db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE expires_at > ?').get(Date.now()) as {
        n: number;
      }
    ).n;
  }

  purgeExpired(): void {
    this.db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(Date.now());
  }
}
