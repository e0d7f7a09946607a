import crypto from 'node:crypto';
import type { Sql } from './sql.js';

export interface Session {
  /** The secret the session's token carries: never stored, only its hash (`hashOf`). */
  id: string;
  userId: number;
  createdAt: number;
  expiresAt: number;
}

/**
 * What is stored of a session's secret: a copy of the database names no session a token could
 * carry. Work that outlives a request holds its session by this key (`getByKey`, `latestKey`).
 */
export function sessionKeyOf(id: string): string {
  return hashOf(id);
}

function hashOf(id: string): string {
  return crypto.createHash('sha256').update(id, 'utf8').digest('base64url');
}

/**
 * Server-side sessions: a token is only as valid as its row here. Rows are found by the SHA-256
 * of the session's secret (192 random bits, so a fast hash is enough), never by the secret.
 */
export class SessionsRepo {
  constructor(private readonly sql: Sql) {}

  async create(userId: number, lifetimeSeconds: number): Promise<Session> {
    const now = Date.now();
    const session = {
      id: crypto.randomBytes(24).toString('base64url'),
      userId,
      createdAt: now,
      expiresAt: now + lifetimeSeconds * 1000,
    };
    await this.sql
      .insertInto('sessions')
      .values({
        id_hash: hashOf(session.id),
        user_id: session.userId,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
      })
      .execute();
    return session;
  }

  /** The live session whose secret is `id`, or undefined when revoked or expired. */
  async get(id: string): Promise<Session | undefined> {
    const found = await this.getByKey(hashOf(id));
    return found && { ...found, id };
  }

  /** The live session of a key (`sessionKeyOf`), or undefined when revoked or expired. */
  async getByKey(key: string): Promise<Omit<Session, 'id'> | undefined> {
    const row = await this.sql
      .selectFrom('sessions')
      .select(['user_id', 'created_at', 'expires_at'])
      .where('id_hash', '=', key)
      .where('expires_at', '>', Date.now())
      .executeTakeFirst();
    return row && { userId: row.user_id, createdAt: row.created_at, expiresAt: row.expires_at };
  }

  /**
   * Notes that session `from` was renewed into `to` (before `from` is revoked), forgetting
   * renewals older than `keepMs`: work moves on to the session it reached at every check.
   */
  async renewed(from: string, to: string, keepMs: number): Promise<void> {
    const now = Date.now();
    await this.sql
      .deleteFrom('session_renewals')
      .where('renewed_at', '<', now - keepMs)
      .execute();
    await this.sql
      .insertInto('session_renewals')
      .values({ from_hash: hashOf(from), to_hash: hashOf(to), renewed_at: now })
      .onConflict((oc) => oc.column('from_hash').doUpdateSet({ to_hash: hashOf(to), renewed_at: now }))
      .execute();
  }

  /** The key of the session `key`'s was last renewed into (itself when it never was). */
  async latestKey(key: string): Promise<string> {
    let current = key;
    for (let hops = 0; hops < 1000; hops++) {
      const next = await this.sql
        .selectFrom('session_renewals')
        .select('to_hash')
        .where('from_hash', '=', current)
        .executeTakeFirst();
      if (!next) break;
      current = next.to_hash;
    }
    return current;
  }

  async revoke(id: string): Promise<void> {
    await this.sql.deleteFrom('sessions').where('id_hash', '=', hashOf(id)).execute();
  }

  async revokeUser(userId: number, exceptId?: string): Promise<void> {
    await this.sql
      .deleteFrom('sessions')
      .where('user_id', '=', userId)
      .where('id_hash', '!=', exceptId === undefined ? '' : hashOf(exceptId))
      .execute();
  }

  /** Sessions not yet expired or revoked (the metrics gauge). */
  async countLive(): Promise<number> {
    const row = await this.sql
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('expires_at', '>', Date.now())
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async purgeExpired(): Promise<void> {
    await this.sql.deleteFrom('sessions').where('expires_at', '<=', Date.now()).execute();
  }
}
