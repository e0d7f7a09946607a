import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { DavLocksTable, Schema } from './schema.js';
import { dialectOf, inTransaction, type Sql } from './sql.js';

/** A dead property of a WebDAV resource (PROPPATCH): its name and its element as XML text. */
export interface DeadProp {
  ns: string;
  name: string;
  /** The whole property element, serialised with the namespace declarations it needs. */
  xml: string;
}

/**
 * Places are a root id and a path below that root (`/a/b`, as `FileAccess.rootPathOf` gives):
 * properties and locks belong to the file, not to whichever user's scope named it. `within` is a
 * place and everything below it.
 */
function within<T extends 'dav_props' | 'dav_locks'>(
  eb: ExpressionBuilder<Schema, T>,
  path: string,
): Expression<SqlBool> {
  const prefix = path === '/' ? '/' : path + '/';
  const e = eb as unknown as ExpressionBuilder<Schema, 'dav_props'>;
  return e.or([e('path', '=', path), e(sql`substr(path, 1, ${prefix.length})`, '=', prefix)]);
}

/** A dead property as stored: who set it last (their limit counts it) and its size in bytes. */
export interface StoredDeadProp {
  ns: string;
  name: string;
  userId: number;
  bytes: number;
}

/** The bytes of a property element as stored (UTF-8), in SQL of the database at hand. */
/** A property row as a copy takes it. */
export interface PropRow {
  path: string;
  ns: string;
  name: string;
  xml: string;
}

const bytesOf = (db: Sql) =>
  dialectOf(db) === 'postgres' ? sql<number>`octet_length(xml)` : sql<number>`length(CAST(xml AS BLOB))`;

/**
 * Dead properties, kept per resource; they follow moves and copies and go with deletes. Each
 * row remembers who set it (a copy's rows are the copier's), so that what one user stores can
 * be bounded, and its bytes count against the quota of the scope it lies in (files/quota.ts).
 */
export class DavPropsRepo {
  constructor(private readonly sql: Sql) {}

  /** The properties of one place: names, who set them, their bytes. */
  async rowsAt(rootId: string, path: string): Promise<StoredDeadProp[]> {
    const rows = await this.sql
      .selectFrom('dav_props')
      .select(['ns', 'name', 'user_id', bytesOf(this.sql).as('bytes')])
      .where('root_id', '=', rootId)
      .where('path', '=', path)
      .execute();
    return rows.map((r) => ({ ns: r.ns, name: r.name, userId: r.user_id, bytes: Number(r.bytes) }));
  }

  /** Bytes of the properties a user set, but for those of one place (which the caller counts itself). */
  async bytesOfUser(userId: number, except?: { rootId: string; path: string }): Promise<number> {
    let query = this.sql
      .selectFrom('dav_props')
      .select(sql<number>`COALESCE(SUM(${bytesOf(this.sql)}), 0)`.as('bytes'))
      .where('user_id', '=', userId);
    if (except) {
      query = query.where((eb) =>
        eb.not(eb.and([eb('root_id', '=', except.rootId), eb('path', '=', except.path)])),
      );
    }
    return Number((await query.executeTakeFirstOrThrow()).bytes);
  }

  /** Bytes of the properties of `path` and (unless `depth0`) of everything below it. */
  async bytesWithin(rootId: string, path: string, depth0 = false): Promise<number> {
    const row = await this.sql
      .selectFrom('dav_props')
      .select(sql<number>`COALESCE(SUM(${bytesOf(this.sql)}), 0)`.as('bytes'))
      .where('root_id', '=', rootId)
      .where((eb) => (depth0 ? eb('path', '=', path) : within(eb, path)))
      .executeTakeFirstOrThrow();
    return Number(row.bytes);
  }

  /** The properties of `path` (and of everything below it with `below`), by path. */
  async listWithin(rootId: string, path: string, below: boolean): Promise<Map<string, DeadProp[]>> {
    const rows = await this.sql
      .selectFrom('dav_props')
      .select(['path', 'ns', 'name', 'xml'])
      .where('root_id', '=', rootId)
      .where((eb) => (below ? within(eb, path) : eb('path', '=', path)))
      .orderBy('path')
      .orderBy('ns')
      .orderBy('name')
      .execute();
    const byPath = new Map<string, DeadProp[]>();
    for (const { path: p, ...prop } of rows) byPath.set(p, [...(byPath.get(p) ?? []), prop]);
    return byPath;
  }

  /**
   * Sets (with `xml`, as `userId`'s) and removes (without), in document order, in one
   * transaction: PROPPATCH is all or nothing.
   */
  async patch(
    rootId: string,
    path: string,
    ops: Array<{ ns: string; name: string; xml?: string }>,
    userId: number,
  ): Promise<void> {
    await inTransaction(this.sql, async (tx) => {
      for (const p of ops) {
        if (p.xml === undefined) {
          await tx
            .deleteFrom('dav_props')
            .where('root_id', '=', rootId)
            .where('path', '=', path)
            .where('ns', '=', p.ns)
            .where('name', '=', p.name)
            .execute();
        } else {
          const xml = p.xml;
          await tx
            .insertInto('dav_props')
            .values({ root_id: rootId, path, ns: p.ns, name: p.name, xml, user_id: userId })
            .onConflict((oc) =>
              oc.columns(['root_id', 'path', 'ns', 'name']).doUpdateSet({ xml, user_id: userId }),
            )
            .execute();
        }
      }
    });
  }

  /** The properties of `from` and everything below it now belong to `to` (a MOVE). */
  async move(rootId: string, from: string, to: string): Promise<void> {
    if (from === '/' || from === to) return;
    await inTransaction(this.sql, async (tx) => {
      await new DavPropsRepo(tx).remove(rootId, to);
      await tx
        .updateTable('dav_props')
        .set({ path: sql<string>`${to} || substr(path, ${from.length + 1})` })
        .where('root_id', '=', rootId)
        .where((eb) => within(eb, from))
        .execute();
    });
  }

  /** The property rows at `path` (and below it unless `depth0`): what a copy takes, read as it begins. */
  async rowsWithin(rootId: string, path: string, depth0: boolean): Promise<PropRow[]> {
    return this.sql
      .selectFrom('dav_props')
      .select(['path', 'ns', 'name', 'xml'])
      .where('root_id', '=', rootId)
      .where((eb) => (depth0 ? eb('path', '=', path) : within(eb, path)))
      .execute();
  }

  /**
   * A COPY's properties: `rows` (read from `from` as the copy began, `rowsWithin`) become
   * `userId`'s at `to`, replacing what `to` had. Rows set on the source while the copy ran are
   * not taken: what was checked against the copier's limit and quota is what is stored.
   */
  async copy(
    rootId: string,
    from: string,
    to: string,
    rows: readonly PropRow[],
    userId: number,
  ): Promise<void> {
    if (from === to) return;
    await inTransaction(this.sql, async (tx) => {
      await new DavPropsRepo(tx).remove(rootId, to);
      if (rows.length === 0) return;
      await tx
        .insertInto('dav_props')
        .values(
          rows.map((r) => ({
            root_id: rootId,
            path: from === '/' ? to + r.path : to + r.path.slice(from.length),
            ns: r.ns,
            name: r.name,
            xml: r.xml,
            user_id: userId,
          })),
        )
        .execute();
    });
  }

  /** Forgets the properties of `path` and everything below it (a DELETE). */
  async remove(rootId: string, path: string): Promise<void> {
    await this.sql
      .deleteFrom('dav_props')
      .where('root_id', '=', rootId)
      .where((eb) => within(eb, path))
      .execute();
  }

  /** Bytes of the properties at and below a place (what they add to the quota of a scope there). */
  bytesBelow(rootId: string, place: string): Promise<number> {
    return this.bytesWithin(rootId, place);
  }
}

export interface DavLock {
  token: string;
  rootId: string;
  path: string;
  userId: number;
  scope: 'exclusive' | 'shared';
  depth: '0' | 'infinity';
  /** The owner element the client sent, as XML text ('' when none). */
  owner: string;
  /** Seconds the lock lasts from its last refresh. */
  timeout: number;
  expiresAt: number;
  /** When it was taken (Unix ms): it ends a fixed lifetime after, however often refreshed. */
  createdAt: number;
  /** The id of the API token it was taken with, if any: the lock ends when the token is revoked. */
  apiToken?: string;
}

const lockOf = (r: DavLocksTable): DavLock => ({
  token: r.token,
  rootId: r.root_id,
  path: r.path,
  userId: r.user_id,
  scope: r.scope === 'shared' ? 'shared' : 'exclusive',
  depth: r.depth === '0' ? '0' : 'infinity',
  owner: r.owner,
  timeout: r.timeout,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  ...(r.api_token ? { apiToken: r.api_token } : {}),
});

/**
 * WebDAV locks (class 2). Expired locks are never answered; they are dropped for good when a
 * lock is taken or listed, so that reading (every write asks) writes nothing.
 */
export class DavLocksRepo {
  constructor(private readonly sql: Sql) {}

  async create(lock: DavLock): Promise<void> {
    await this.purgeExpired();
    await this.sql
      .insertInto('dav_locks')
      .values({
        token: lock.token,
        root_id: lock.rootId,
        path: lock.path,
        user_id: lock.userId,
        scope: lock.scope,
        depth: lock.depth,
        owner: lock.owner,
        timeout: lock.timeout,
        expires_at: lock.expiresAt,
        created_at: lock.createdAt,
        api_token: lock.apiToken ?? null,
      })
      .execute();
  }

  async get(token: string, now = Date.now()): Promise<DavLock | undefined> {
    const row = await this.sql
      .selectFrom('dav_locks')
      .selectAll()
      .where('token', '=', token)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row && lockOf(row);
  }

  async refresh(token: string, timeout: number, expiresAt: number): Promise<void> {
    await this.sql
      .updateTable('dav_locks')
      .set({ timeout, expires_at: expiresAt })
      .where('token', '=', token)
      .execute();
  }

  async delete(token: string): Promise<boolean> {
    const result = await this.sql.deleteFrom('dav_locks').where('token', '=', token).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Locks whose root is `path`, one of its ancestors, or below it. */
  async related(rootId: string, path: string, now = Date.now()): Promise<DavLock[]> {
    const ancestors = ['/'];
    const parts = path.split('/').filter(Boolean);
    for (let i = 1; i <= parts.length; i++) ancestors.push('/' + parts.slice(0, i).join('/'));
    const rows = await this.sql
      .selectFrom('dav_locks')
      .selectAll()
      .where('root_id', '=', rootId)
      .where('expires_at', '>', now)
      .where((eb) => eb.or([eb('path', 'in', ancestors), within(eb, path)]))
      .execute();
    return rows.map(lockOf);
  }

  /** Every lock in force, oldest first (for administrators). */
  async all(now = Date.now()): Promise<DavLock[]> {
    await this.purgeExpired(now);
    const rows = await this.sql
      .selectFrom('dav_locks')
      .selectAll()
      .orderBy('created_at')
      .orderBy('token')
      .execute();
    return rows.map(lockOf);
  }

  /** How many locks in force a user holds. */
  async countOfUser(userId: number, now = Date.now()): Promise<number> {
    const row = await this.sql
      .selectFrom('dav_locks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** How many locks in force have their root at one place. */
  async countAt(rootId: string, path: string, now = Date.now()): Promise<number> {
    const row = await this.sql
      .selectFrom('dav_locks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('root_id', '=', rootId)
      .where('path', '=', path)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Drops the locks of `path` and everything below it (the resources are gone or moved away). */
  async removeWithin(rootId: string, path: string): Promise<void> {
    await this.sql
      .deleteFrom('dav_locks')
      .where('root_id', '=', rootId)
      .where((eb) => within(eb, path))
      .execute();
  }

  async purgeExpired(now = Date.now()): Promise<void> {
    await this.sql.deleteFrom('dav_locks').where('expires_at', '<=', now).execute();
  }
}
