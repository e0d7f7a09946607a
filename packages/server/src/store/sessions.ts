import crypto from 'node:crypto';
import { dialectOf, inTransaction, type Sql } from './sql.js';

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

  /**
   * Ends session `id` of user `userId` and starts its successor, noted as its renewal, in one
   * transaction in the user's turn (`lockUser`): undefined, and nothing made, when the session had
   * already ended (a logout, a password change, a parallel renewal of the same token), so that no
   * renewal outlives an ending and one token renews into one session.
   */
  async renew(
    id: string,
    userId: number,
    lifetimeSeconds: number,
    keepMs: number,
  ): Promise<Session | undefined> {
    return inTransaction(this.sql, async (tx) => {
      await lockUser(tx, userId);
      const ended = await tx
        .deleteFrom('sessions')
        .where('id_hash', '=', hashOf(id))
        .where('user_id', '=', userId)
        .where('expires_at', '>', Date.now())
        .executeTakeFirst();
      if (Number(ended.numDeletedRows) === 0) return undefined;
      const repo = new SessionsRepo(tx);
      const next = await repo.create(userId, lifetimeSeconds);
      await repo.renewed(id, next.id, keepMs);
      return next;
    });
  }

  /**
   * Logout: ends session `id` of user `userId` and every session it was renewed into (a renewal
   * sent just before with the same token ends with it), in its user's turn, taken first: a
   * renewal either ended before (its successor is in the chain) or finds the session ended.
   */
  async logout(id: string, userId: number): Promise<void> {
    await inTransaction(this.sql, async (tx) => {
      await lockUser(tx, userId);
      const keys = await new SessionsRepo(tx).chainOf(hashOf(id));
      await tx.deleteFrom('sessions').where('id_hash', 'in', keys).where('user_id', '=', userId).execute();
    });
  }

  /** A session's key and the keys of the sessions it was renewed into, in order. */
  private async chainOf(key: string): Promise<string[]> {
    const keys = [key];
    for (let hops = 0; hops < 1000; hops++) {
      const next = await this.successorOf(keys.at(-1)!);
      if (next === undefined) break;
      keys.push(next);
    }
    return keys;
  }

  private async successorOf(key: string): Promise<string | undefined> {
    const next = await this.sql
      .selectFrom('session_renewals')
      .select('to_hash')
      .where('from_hash', '=', key)
      .executeTakeFirst();
    return next?.to_hash;
  }

  /** The key of the session `key`'s was last renewed into (itself when it never was). */
  async latestKey(key: string): Promise<string> {
    return (await this.chainOf(key)).at(-1)!;
  }

  async revoke(id: string): Promise<void> {
    await this.sql.deleteFrom('sessions').where('id_hash', '=', hashOf(id)).execute();
  }

  /** Ends every session of a user but `exceptId`, in the user's turn (a renewal under way ends too). */
  async revokeUser(userId: number, exceptId?: string): Promise<void> {
    await inTransaction(this.sql, async (tx) => {
      await lockUser(tx, userId);
      await tx
        .deleteFrom('sessions')
        .where('user_id', '=', userId)
        .where('id_hash', '!=', exceptId === undefined ? '' : hashOf(exceptId))
        .execute();
    });
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

/**
 * The user's turn for their sessions: on PostgreSQL the user's row is locked until the
 * transaction ends, so that a renewal and an ending (logout, password change) of one user never
 * interleave, through whichever instances. SQLite runs one transaction at a time anyway.
 */
async function lockUser(tx: Sql, userId: number): Promise<void> {
  if (dialectOf(tx) !== 'postgres') return;
  await tx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
}
