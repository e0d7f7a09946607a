import crypto from 'node:crypto';
import type { Db } from './db.js';

export interface Session {
  id: string;
  userId: number;
  createdAt: number;
  expiresAt: number;
}

/** Server-side sessions: a token is only as valid as its row here. */
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
      .prepare('INSERT INTO sessions (id, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
      .run(session.id, session.userId, session.createdAt, session.expiresAt);
    return session;
  }

  /** The live session with this id, or undefined when revoked or expired. */
  get(id: string): Session | undefined {
    const row = this.db
      .prepare('SELECT id, user_id, created_at, expires_at FROM sessions WHERE id = ? AND expires_at > ?')
      .get(id, Date.now()) as
      { id: string; user_id: number; created_at: number; expires_at: number } | undefined;
    return row && { id: row.id, userId: row.user_id, createdAt: row.created_at, expiresAt: row.expires_at };
  }

  revoke(id: string): void {
    this.db.prepare('DELETE FROM sessions WHERE id = ?').run(id);
  }

  revokeUser(userId: number, exceptId?: string): void {
    this.db.prepare('DELETE FROM sessions WHERE user_id = ? AND id != ?').run(userId, exceptId ?? '');
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
