import type { Client, Pool } from 'pg';
import { CONNECT_TIMEOUT_MS, markingLostConnections, markLostConnection } from './postgres.js';

/** A lock held across the instances of one database, until released or lost. */
export interface HeldLock {
  /**
   * True once the lock may be held by another instance: its connection to the database was
   * lost. Work that must be alone checks this before a step that cannot be undone.
   */
  readonly lost: boolean;
  release(): Promise<void>;
}

/**
 * Locks by name that at most one instance holds at a time, for work that outlasts a query (the
 * requests of one resumable upload). Callers keep work of one name apart within their own process
 * themselves; this keeps it apart across processes.
 */
export interface LockLine {
  /** The lock of `name`, or undefined at once when another instance holds it. */
  tryHold(name: string): Promise<HeldLock | undefined>;
  /**
   * The lock of `name`, once no other instance holds it: for short sections only, which take no
   * other lock meanwhile. Each is waited for on a connection of its own, never on the line, so
   * that a wait never holds back another lock's release (two instances each waiting on one line
   * for what the other holds, behind the release of what it holds itself, were a deadlock).
   */
  hold(name: string): Promise<HeldLock>;
  close(): Promise<void>;
}

/** One process on a SQLite file: nobody else to keep apart from. */
export function localLockLine(): LockLine {
  const free: HeldLock = { lost: false, release: () => Promise.resolve() };
  return {
    tryHold: () => Promise.resolve(free),
    hold: () => Promise.resolve(free),
    close: () => Promise.resolve(),
  };
}

/**
 * PostgreSQL's advisory locks. `tryHold`: session-level locks, all on one connection of this
 * instance's own (made when first needed): a lock lasts as long as the connection, and the
 * database frees every lock of an instance whose process dies (its connection closes with it), so
 * another instance can go on at once. A lost connection loses every lock on it: each is marked
 * `lost`. `hold`: a transaction's lock, waited for on a pooled connection of the section's own.
 */
export function postgresLockLine(url: string): LockLine {
  let line: Promise<{ client: Client; held: Set<{ lost: boolean }> }> | undefined;
  let closed = false;
  // Short sections' locks: a transaction's advisory lock each, on a pooled connection.
  let sections: Promise<Pool> | undefined;
  const sectionPool = () =>
    (sections ??= import('pg').then(({ default: pg }) => {
      const pool = new pg.Pool({
        connectionString: url,
        max: 4,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      });
      // A connection the database cuts (an idle one, or one a section holds) must not end the
      // process: the section's query fails instead. Every connection keeps this listener for life.
      pool.on('error', () => undefined);
      pool.on('connect', (client) => client.on('error', () => undefined));
      // A section that cannot reach the database answers 503, as the store's queries do.
      return markingLostConnections(pool);
    }));

  const connect = async () => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    const held = new Set<{ lost: boolean }>();
    const drop = () => {
      if (line === current) line = undefined;
      for (const h of held) h.lost = true;
      held.clear();
    };
    client.on('error', drop);
    client.on('end', drop);
    const current = client.connect().then(() => ({ client, held }));
    line = current;
    current.catch(() => {
      if (line === current) line = undefined;
    });
    return current;
  };

  const take = async (name: string): Promise<HeldLock | undefined> => {
    if (closed) throw new Error('the store is closed');
    const { client, held } = await (line ?? connect()).catch((err: unknown) => {
      throw markLostConnection(err);
    });
    const key = `filebrowser:${name}`;
    const got = await client
      .query<{ got: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got', [key])
      .catch((err: unknown) => {
        throw markLostConnection(err);
      });
    if (!got.rows[0]?.got) return undefined;
    const lock = { lost: false };
    held.add(lock);
    return {
      get lost() {
        return lock.lost;
      },
      release: async () => {
        if (lock.lost) return;
        held.delete(lock);
        await client
          .query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key])
          .catch(() => undefined);
      },
    };
  };

  return {
    tryHold: take,
    hold: async (name) => {
      if (closed) throw new Error('the store is closed');
      const client = await (await sectionPool()).connect();
      const state = { lost: false };
      const lose = () => (state.lost = true);
      client.on('error', lose);
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`filebrowser:${name}`]);
      } catch (err) {
        client.off('error', lose);
        client.release(true);
        throw err;
      }
      return {
        get lost() {
          return state.lost;
        },
        release: async () => {
          // Its listener goes once the connection is back in the pool: a cut during the COMMIT
          // is an error of the COMMIT (the pool's listener stays for the rest).
          try {
            await client.query('COMMIT');
            client.release();
          } catch {
            client.release(true);
          } finally {
            client.off('error', lose);
          }
        },
      };
    },
    async close() {
      closed = true;
      const current = line;
      line = undefined;
      const open = await current?.catch(() => undefined);
      await open?.client.end().catch(() => undefined);
      const pool = await sections?.catch(() => undefined);
      await pool?.end().catch(() => undefined);
    },
  };
}
