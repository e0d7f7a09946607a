import type { Db } from './db.js';

/** A dead property of a WebDAV resource (PROPPATCH): its name and its element as XML text. */
export interface DeadProp {
  ns: string;
  name: string;
  /** The whole property element, serialised with the namespace declarations it needs. */
  xml: string;
}

/**
 * Places are a root id and a path below that root (`/a/b`, as `FileAccess.rootPathOf` gives):
 * properties and locks belong to the file, not to whichever user's scope named it.
 */
const within = '(path = ? OR substr(path, 1, ?) = ?)';
const subtree = (path: string): [string, number, string] => {
  const prefix = path === '/' ? '/' : path + '/';
  return [path, prefix.length, prefix];
};

/** A dead property as stored: who set it last (their limit counts it) and its size in bytes. */
export interface StoredDeadProp {
  ns: string;
  name: string;
  userId: number;
  bytes: number;
}

/** The bytes of a property element as stored (UTF-8), in SQL. */
const BYTES = 'length(CAST(xml AS BLOB))';

/**
 * Dead properties, kept per resource; they follow moves and copies and go with deletes. Each
 * row remembers who set it (a copy's rows are the copier's), so that what one user stores can
 * be bounded, and its bytes count against the quota of the scope it lies in (files/quota.ts).
 */
export class DavPropsRepo {
  constructor(private readonly db: Db) {}

  /** The properties of one place: names, who set them, their bytes. */
  rowsAt(rootId: string, path: string): StoredDeadProp[] {
    return this.db
      .prepare(
        `SELECT ns, name, user_id AS userId, ${BYTES} AS bytes FROM dav_props WHERE root_id = ? AND path = ?`,
      )
      .all(rootId, path) as StoredDeadProp[];
  }

  /** Bytes of the properties a user set, but for those of one place (which the caller counts itself). */
  bytesOfUser(userId: number, except?: { rootId: string; path: string }): number {
    const row = (
      except
        ? this.db
            .prepare(
              `SELECT COALESCE(SUM(${BYTES}), 0) AS bytes FROM dav_props
               WHERE user_id = ? AND NOT (root_id = ? AND path = ?)`,
            )
            .get(userId, except.rootId, except.path)
        : this.db
            .prepare(`SELECT COALESCE(SUM(${BYTES}), 0) AS bytes FROM dav_props WHERE user_id = ?`)
            .get(userId)
    ) as { bytes: number };
    return row.bytes;
  }

  /** Bytes of the properties of `path` and (unless `depth0`) of everything below it. */
  bytesWithin(rootId: string, path: string, depth0 = false): number {
    const row = (
      depth0
        ? this.db
            .prepare(
              `SELECT COALESCE(SUM(${BYTES}), 0) AS bytes FROM dav_props WHERE root_id = ? AND path = ?`,
            )
            .get(rootId, path)
        : this.db
            .prepare(
              `SELECT COALESCE(SUM(${BYTES}), 0) AS bytes FROM dav_props WHERE root_id = ? AND ${within}`,
            )
            .get(rootId, ...subtree(path))
    ) as { bytes: number };
    return row.bytes;
  }

  /** The properties of `path` (and of everything below it with `below`), by path. */
  listWithin(rootId: string, path: string, below: boolean): Map<string, DeadProp[]> {
    const rows = (
      below
        ? this.db
            .prepare(
              `SELECT path, ns, name, xml FROM dav_props WHERE root_id = ? AND ${within} ORDER BY path, ns, name`,
            )
            .all(rootId, ...subtree(path))
        : this.db
            .prepare(
              'SELECT path, ns, name, xml FROM dav_props WHERE root_id = ? AND path = ? ORDER BY ns, name',
            )
            .all(rootId, path)
    ) as Array<DeadProp & { path: string }>;
    const byPath = new Map<string, DeadProp[]>();
    for (const { path: p, ...prop } of rows) byPath.set(p, [...(byPath.get(p) ?? []), prop]);
    return byPath;
  }

  /**
   * Sets (with `xml`, as `userId`'s) and removes (without), in document order, in one
   * transaction: PROPPATCH is all or nothing.
   */
  patch(
    rootId: string,
    path: string,
    ops: Array<{ ns: string; name: string; xml?: string }>,
    userId: number,
  ): void {
    const put = this.db.prepare(
      `INSERT INTO dav_props (root_id, path, ns, name, xml, user_id) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(root_id, path, ns, name) DO UPDATE SET xml = excluded.xml, user_id = excluded.user_id`,
    );
    const del = this.db.prepare(
      'DELETE FROM dav_props WHERE root_id = ? AND path = ? AND ns = ? AND name = ?',
    );
    this.db.transaction(() => {
      for (const p of ops) {
        if (p.xml === undefined) del.run(rootId, path, p.ns, p.name);
        else put.run(rootId, path, p.ns, p.name, p.xml, userId);
      }
    })();
  }

  /** The properties of `from` and everything below it now belong to `to` (a MOVE). */
  move(rootId: string, from: string, to: string): void {
    if (from === '/' || from === to) return;
    this.db.transaction(() => {
      this.remove(rootId, to);
      this.db
        .prepare(`UPDATE dav_props SET path = ? || substr(path, ?) WHERE root_id = ? AND ${within}`)
        .run(to, from.length + 1, rootId, ...subtree(from));
    })();
  }

  /** A copy of the properties of `from` and below at `to`, as `userId`'s (a COPY; what `to` had is replaced). */
  copy(rootId: string, from: string, to: string, depth0: boolean, userId: number): void {
    if (from === to) return;
    this.db.transaction(() => {
      this.remove(rootId, to);
      const rows = depth0
        ? this.db
            .prepare('SELECT path, ns, name, xml FROM dav_props WHERE root_id = ? AND path = ?')
            .all(rootId, from)
        : this.db
            .prepare(`SELECT path, ns, name, xml FROM dav_props WHERE root_id = ? AND ${within}`)
            .all(rootId, ...subtree(from));
      const put = this.db.prepare(
        'INSERT INTO dav_props (root_id, path, ns, name, xml, user_id) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const r of rows as Array<DeadProp & { path: string }>) {
        const rest = r.path.slice(from.length);
        put.run(rootId, from === '/' ? to + r.path : to + rest, r.ns, r.name, r.xml, userId);
      }
    })();
  }

  /** Forgets the properties of `path` and everything below it (a DELETE). */
  remove(rootId: string, path: string): void {
    this.db.prepare(`DELETE FROM dav_props WHERE root_id = ? AND ${within}`).run(rootId, ...subtree(path));
  }

  /** Bytes of the properties at and below a place (what they add to the quota of a scope there). */
  bytesBelow(rootId: string, place: string): number {
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
}

interface LockRow {
  token: string;
  root_id: string;
  path: string;
  user_id: number;
  scope: string;
  depth: string;
  owner: string;
  timeout: number;
  expires_at: number;
  created_at: number;
}

const lockOf = (r: LockRow): DavLock => ({
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
});

/**
 * WebDAV locks (class 2). Expired locks are never answered; they are dropped for good when a
 * lock is taken or listed, so that reading (every write asks) writes nothing.
 */
export class DavLocksRepo {
  constructor(private readonly db: Db) {}

  create(lock: DavLock): void {
    this.purgeExpired();
    this.db
      .prepare(
        `INSERT INTO dav_locks (token, root_id, path, user_id, scope, depth, owner, timeout, expires_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        lock.token,
        lock.rootId,
        lock.path,
        lock.userId,
        lock.scope,
        lock.depth,
        lock.owner,
        lock.timeout,
        lock.expiresAt,
        lock.createdAt,
      );
  }

  get(token: string, now = Date.now()): DavLock | undefined {
    const row = this.db
      .prepare('SELECT * FROM dav_locks WHERE token = ? AND expires_at > ?')
      .get(token, now) as LockRow | undefined;
    return row && lockOf(row);
  }

  refresh(token: string, timeout: number, expiresAt: number): void {
    this.db
      .prepare('UPDATE dav_locks SET timeout = ?, expires_at = ? WHERE token = ?')
      .run(timeout, expiresAt, token);
  }

  delete(token: string): boolean {
    return this.db.prepare('DELETE FROM dav_locks WHERE token = ?').run(token).changes > 0;
  }

  /** Locks whose root is `path`, one of its ancestors, or below it. */
  related(rootId: string, path: string, now = Date.now()): DavLock[] {
    const ancestors = ['/'];
    const parts = path.split('/').filter(Boolean);
    for (let i = 1; i <= parts.length; i++) ancestors.push('/' + parts.slice(0, i).join('/'));
    const rows = this.db
      .prepare(
        `SELECT * FROM dav_locks WHERE root_id = ? AND expires_at > ?
         AND (path IN (${ancestors.map(() => '?').join(',')}) OR ${within})`,
      )
      .all(rootId, now, ...ancestors, ...subtree(path)) as LockRow[];
    return rows.map(lockOf);
  }

  /** Every lock in force, oldest first (for administrators). */
  all(now = Date.now()): DavLock[] {
    this.purgeExpired(now);
    const rows = this.db.prepare('SELECT * FROM dav_locks ORDER BY created_at, token').all() as LockRow[];
    return rows.map(lockOf);
  }

  /** How many locks in force a user holds. */
  countOfUser(userId: number, now = Date.now()): number {
    return (
      this.db
        .prepare('SELECT COUNT(*) AS n FROM dav_locks WHERE user_id = ? AND expires_at > ?')
        .get(userId, now) as { n: number }
    ).n;
  }

  /** How many locks in force have their root at one place. */
  countAt(rootId: string, path: string, now = Date.now()): number {
    return (
      this.db
        .prepare('SELECT COUNT(*) AS n FROM dav_locks WHERE root_id = ? AND path = ? AND expires_at > ?')
        .get(rootId, path, now) as { n: number }
    ).n;
  }

  /** Drops the locks of `path` and everything below it (the resources are gone or moved away). */
  removeWithin(rootId: string, path: string): void {
    this.db.prepare(`DELETE FROM dav_locks WHERE root_id = ? AND ${within}`).run(rootId, ...subtree(path));
  }

  purgeExpired(now = Date.now()): void {
    this.db.prepare('DELETE FROM dav_locks WHERE expires_at <= ?').run(now);
  }
}
