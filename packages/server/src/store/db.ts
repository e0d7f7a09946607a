import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

/**
 * Schema migrations, applied in order; the index + 1 is the schema version kept in
 * `PRAGMA user_version`. Append, never edit: databases in the field have run the old ones. A
 * step is SQL, or a function for data that SQL alone cannot move.
 */
const MIGRATIONS: Array<string | ((db: Db) => void)> = [
  `
  CREATE TABLE config (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT NOT NULL,
    username_key  TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    profile       TEXT NOT NULL,
    updated_at    INTEGER NOT NULL
  );
  CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX sessions_user ON sessions(user_id);
  CREATE TABLE shares (
    hash          TEXT PRIMARY KEY,
    path          TEXT NOT NULL,
    user_id       INTEGER NOT NULL,
    expire        INTEGER NOT NULL,
    password_hash TEXT NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL
  );
  CREATE INDEX shares_user_path ON shares(user_id, path);
  `,
  `
  CREATE TABLE uploads (
    id          TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    length      INTEGER NOT NULL,
    override    INTEGER NOT NULL,
    staging     TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (user_id, path)
  );
  `,
  // Shares point at what was shared, not at a path in whatever the owner's scope is later: the
  // item's place below the served root (`root_path`, a trailing "/" for folder shares) is kept
  // beside the owner's path. Existing links get their owner's scope joined to their path.
  `
  ALTER TABLE shares ADD COLUMN root_id TEXT NOT NULL DEFAULT 'default';
  ALTER TABLE shares ADD COLUMN root_path TEXT NOT NULL DEFAULT '';
  `,
  (db) => {
    const scopes = new Map<number, string>();
    for (const u of db.prepare('SELECT id, profile FROM users').all() as { id: number; profile: string }[]) {
      const scope = String((JSON.parse(u.profile) as { scope?: unknown }).scope ?? '/');
      scopes.set(u.id, scope);
    }
    const update = db.prepare('UPDATE shares SET root_path = ? WHERE hash = ?');
    for (const s of db.prepare('SELECT hash, path, user_id FROM shares').all() as {
      hash: string;
      path: string;
      user_id: number;
    }[]) {
      update.run(joinScopePath(scopes.get(s.user_id) ?? '/', s.path), s.hash);
    }
  },
  // Username keys widen from NFC to NFKC with case folding, so that full-width and other
  // compatibility spellings are the same account. The key is spelt out here, not imported: this
  // step must compute what it computed when it shipped. Two existing accounts whose keys now
  // collide both stay; the later one gets a key no typed name produces, and keeps signing in by
  // its exact spelling (UsersRepo.getByUsername) until an administrator renames it.
  (db) => {
    const key = (name: string) => name.normalize('NFKC').toLowerCase().normalize('NFKC');
    const rows = db.prepare('SELECT id, username FROM users ORDER BY id').all() as {
      id: number;
      username: string;
    }[];
    const update = db.prepare('UPDATE users SET username_key = ? WHERE id = ?');
    // Keys unique per id first: the UNIQUE index must hold after every single update.
    for (const r of rows) update.run(`\u0000${r.id}`, r.id);
    const taken = new Set<string>();
    for (const r of rows) {
      let k = key(r.username);
      if (taken.has(k)) k = `${k}\u0000${r.id}`;
      taken.add(k);
      update.run(k, r.id);
    }
  },
  // Personal API tokens. IF NOT EXISTS: the step must not depend on its place in this
  // list, which may change when parallel branches are merged.
  `
  CREATE TABLE IF NOT EXISTS api_tokens (
    id           TEXT PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    read_only    INTEGER NOT NULL,
    root_path    TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL DEFAULT 0,
    last_used_at INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX IF NOT EXISTS api_tokens_user ON api_tokens(user_id);
  `,
  // Staging files of writes in progress, so that a start after a crash removes what it left.
  `
  CREATE TABLE IF NOT EXISTS staging_files (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    folder     TEXT NOT NULL,
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  `,
  // WebDAV: dead properties and locks, per place below a root. Locks belong to a user
  // (their tokens are only honoured for them) and go with the account.
  `
  CREATE TABLE IF NOT EXISTS dav_props (
    root_id TEXT NOT NULL,
    path    TEXT NOT NULL,
    ns      TEXT NOT NULL,
    name    TEXT NOT NULL,
    xml     TEXT NOT NULL,
    PRIMARY KEY (root_id, path, ns, name)
  );
  CREATE TABLE IF NOT EXISTS dav_locks (
    token      TEXT PRIMARY KEY,
    root_id    TEXT NOT NULL,
    path       TEXT NOT NULL,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    scope      TEXT NOT NULL,
    depth      TEXT NOT NULL,
    owner      TEXT NOT NULL,
    timeout    INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS dav_locks_place ON dav_locks(root_id, path);
  `,
  // The trash: one row per deleted item held in the trash folder. No foreign key to
  // users: a deleted account's items are removed by its deletion or by the next purge.
  `
  CREATE TABLE IF NOT EXISTS trash (
    id          TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL,
    root_id     TEXT NOT NULL DEFAULT 'default',
    root_path   TEXT NOT NULL,
    path        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    is_dir      INTEGER NOT NULL,
    deleted_by  TEXT NOT NULL,
    deleted_at  INTEGER NOT NULL,
    location    TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS trash_user ON trash(user_id, deleted_at);
  CREATE INDEX IF NOT EXISTS trash_deleted_at ON trash(deleted_at);
  `,
  // The audit log. No foreign key to users: a record outlives the account it names.
  // Paths are indexed for prefix ranges (source and destination); the id orders the pages.
  `
  CREATE TABLE IF NOT EXISTS audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    time        INTEGER NOT NULL,
    user_id     INTEGER NOT NULL,
    username    TEXT NOT NULL,
    address     TEXT NOT NULL,
    action      TEXT NOT NULL,
    path        TEXT NOT NULL,
    destination TEXT NOT NULL,
    status      INTEGER NOT NULL,
    detail      TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS audit_log_time ON audit_log(time);
  CREATE INDEX IF NOT EXISTS audit_log_user ON audit_log(username, id);
  CREATE INDEX IF NOT EXISTS audit_log_action ON audit_log(action, id);
  CREATE INDEX IF NOT EXISTS audit_log_path ON audit_log(path);
  CREATE INDEX IF NOT EXISTS audit_log_destination ON audit_log(destination);
  `,
  // Moves across file systems in progress (copy, then switch), so that a start after a crash
  // finishes or undoes each one. IF NOT EXISTS: the step must not depend on its place in this list.
  `
  CREATE TABLE IF NOT EXISTS moves (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    source_folder  TEXT NOT NULL,
    source_name    TEXT NOT NULL,
    source_id      TEXT NOT NULL,
    hidden_name    TEXT NOT NULL,
    dest_folder    TEXT NOT NULL,
    staging_name   TEXT NOT NULL,
    dest_name      TEXT NOT NULL,
    phase          TEXT NOT NULL,
    created_at     INTEGER NOT NULL
  );
  `,
  // Quotas: the bytes each counted scope holds, so that a write adjusts a number
  // instead of walking the tree. A cache of the disk: losing it costs one walk per scope.
  `
  CREATE TABLE IF NOT EXISTS scope_usage (
    root_id    TEXT NOT NULL,
    scope      TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    counted_at INTEGER NOT NULL,
    PRIMARY KEY (root_id, scope)
  );
  `,
  // WebDAV's bounds: who set each dead property (their limit counts it), and when
  // each lock was taken (none lasts longer than a fixed lifetime, however often refreshed).
  // Each column is added only when missing: the step must not depend on its place in this list.
  (db) => {
    const has = (table: string, column: string) =>
      (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some(
        (c) => c.name === column,
      );
    if (!has('dav_props', 'user_id')) {
      db.exec('ALTER TABLE dav_props ADD COLUMN user_id INTEGER NOT NULL DEFAULT 0');
    }
    if (!has('dav_locks', 'created_at')) {
      db.exec(`ALTER TABLE dav_locks ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
        UPDATE dav_locks SET created_at = expires_at - timeout * 1000;`);
    }
    db.exec(`CREATE INDEX IF NOT EXISTS dav_props_user ON dav_props(user_id);
      CREATE INDEX IF NOT EXISTS dav_locks_user ON dav_locks(user_id);`);
  },
  // Nothing that opens a session or a protected link is kept in a form that grants it: sessions
  // are found by the SHA-256 of the secret their token carries, and the tokens a share password
  // earns are kept the same way, so a copy of the database lets no one in. Sessions of the old
  // form (their ids stored as they were) end here.
  `
  DROP TABLE sessions;
  CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX sessions_user ON sessions(user_id);
  CREATE TABLE IF NOT EXISTS share_grants (
    token_hash TEXT PRIMARY KEY,
    share_hash TEXT NOT NULL REFERENCES shares(hash) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS share_grants_share ON share_grants(share_hash, expires_at);
  `,
  // Several instances on one database (PostgreSQL): each running server is registered and beats,
  // and a record of work in progress names the instance doing it, so that only the records of an
  // instance that died are finished or undone by another.
  // Each part only when missing: the step must not depend on its place in this list.
  (db) => {
    db.exec(`CREATE TABLE IF NOT EXISTS instances (
      id         TEXT PRIMARY KEY,
      host       TEXT NOT NULL,
      pid        INTEGER NOT NULL,
      started_at INTEGER NOT NULL,
      seen_at    INTEGER NOT NULL
    );`);
    for (const table of ['moves', 'staging_files']) {
      const columns = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === 'instance')) {
        db.exec(`ALTER TABLE ${table} ADD COLUMN instance TEXT NOT NULL DEFAULT ''`);
      }
    }
  },
  // Guesses at passwords and tokens counted where every instance on the database sees them.
  `
  CREATE TABLE IF NOT EXISTS attempts (
    kind     TEXT NOT NULL,
    key      TEXT NOT NULL,
    count    INTEGER NOT NULL,
    reset_at INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
  );
  CREATE INDEX IF NOT EXISTS attempts_reset ON attempts(reset_at);
  `,
  // A WebDAV lock taken with an API token ends with the token.
  (db) => {
    const columns = db.prepare('PRAGMA table_info(dav_locks)').all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'api_token')) {
      db.exec('ALTER TABLE dav_locks ADD COLUMN api_token TEXT REFERENCES api_tokens(id) ON DELETE CASCADE');
    }
    db.exec('CREATE INDEX IF NOT EXISTS dav_locks_api_token ON dav_locks(api_token)');
  },
  // What writes in progress hold back from the quotas, per instance (files/change/quota.ts).
  `
  CREATE TABLE IF NOT EXISTS quota_reservations (
    holder TEXT NOT NULL,
    scope  TEXT NOT NULL,
    bytes  INTEGER NOT NULL,
    PRIMARY KEY (holder, scope)
  );
  `,
  // Jobs where every instance on the database sees them (jobs/registry.ts).
  `
  CREATE TABLE IF NOT EXISTS jobs (
    user_id          INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    id               TEXT NOT NULL,
    instance         TEXT NOT NULL,
    confined_to      TEXT,
    action           TEXT NOT NULL,
    state            TEXT NOT NULL,
    items            TEXT NOT NULL,
    destination      TEXT NOT NULL,
    bytes_done       INTEGER NOT NULL DEFAULT 0,
    bytes_total      INTEGER NOT NULL DEFAULT 0,
    items_done       INTEGER NOT NULL DEFAULT 0,
    items_total      INTEGER NOT NULL DEFAULT 0,
    started_at       INTEGER NOT NULL,
    ended_at         INTEGER,
    error            TEXT,
    status           INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, id)
  );
  CREATE INDEX IF NOT EXISTS jobs_instance ON jobs(instance, state);
  `,
  // The identity of a share's item (files/access/identity.ts) as it was when shared: a link
  // serves nothing once something else stands at its place. '' for links made before: their
  // first open records it (shares/public.ts). Only when missing: the step must not depend on its
  // place in this list.
  (db) => {
    if (!hasColumn(db, 'shares', 'item_id')) {
      db.exec(`ALTER TABLE shares ADD COLUMN item_id TEXT NOT NULL DEFAULT ''`);
    }
  },
  // Resumable uploads being created, past the per-user limits' check but not yet recorded: what
  // every instance counts against those limits (uploads/limits.ts).
  `
  CREATE TABLE IF NOT EXISTS upload_creations (
    id       TEXT PRIMARY KEY,
    user_id  INTEGER NOT NULL,
    bytes    INTEGER NOT NULL,
    instance TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS upload_creations_user ON upload_creations(user_id);
  `,
  // Sessions renewed into others, by their secrets' hashes: work started in a session follows
  // its renewal through whichever instance renewed it (auth/service.ts).
  `
  CREATE TABLE IF NOT EXISTS session_renewals (
    from_hash  TEXT PRIMARY KEY,
    to_hash    TEXT NOT NULL,
    renewed_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS session_renewals_at ON session_renewals(renewed_at);
  `,
];

function hasColumn(db: Db, table: string, column: string): boolean {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some(
    (c) => c.name === column,
  );
}

/** A scope (`/`, `/users/bob`, `users/bob`) joined with a path inside it, trailing "/" kept. */
export function joinScopePath(scope: string, inner: string): string {
  const base = ('/' + scope).split('/').filter((s) => s !== '' && s !== '.');
  const rest = inner.split('/').filter((s) => s !== '' && s !== '.');
  const joined = '/' + [...base, ...rest].join('/');
  return inner.endsWith('/') && joined !== '/' ? joined + '/' : joined;
}

/** True when the database file does not exist or is empty: the first start that needs quick setup. */
export function isNewDatabase(file: string): boolean {
  try {
    return fs.statSync(file).size === 0;
  } catch {
    return true;
  }
}

/** Removes a SQLite database this process made, with its -wal and -shm. */
export function removeDatabaseFiles(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
}

/** The schema version this build writes: databases above it come from a newer File Browser. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** A database migrated past what this build knows: opening it could damage data it cannot read. */
export class NewerSchemaError extends Error {
  override name = 'NewerSchemaError';
  constructor(
    readonly file: string,
    readonly version: number,
  ) {
    super(
      `the database ${file} was written by a newer File Browser (schema ${version}, this version knows ${SCHEMA_VERSION}): upgrade, or restore a backup`,
    );
  }
}

export function openDatabase(file: string): Db {
  if (file !== ':memory:') {
    preparePrivateFile(file);
    dropStrayJournal(file);
  }
  const db = new Database(file);
  try {
    // Checked before anything is written, not even the journal mode.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new NewerSchemaError(file, version);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * The database holds password hashes, sessions and the key that signs tokens. A new one is
 * created 0600 in a folder created 0700; SQLite gives its -wal and -shm the database's mode. An
 * existing file keeps the mode its operator chose (0600, or 0640 for a backup group), except
 * that access for every account on the host is taken away: never loosened, never world-readable.
 */
function preparePrivateFile(file: string): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  try {
    const was = fs.statSync(file).mode & 0o7777;
    const mode = was & ~0o007;
    if (mode !== was) fs.chmodSync(file, mode);
    for (const side of [`${file}-wal`, `${file}-shm`]) {
      // Left by an earlier run from before the operator tightened the database.
      const sideMode = statMode(side);
      if (sideMode !== undefined && sideMode & ~mode & 0o777) fs.chmodSync(side, sideMode & mode);
    }
  } catch {
    // A database on a file system without modes still works.
  }
}

/**
 * The server keeps its database in WAL mode, for which SQLite never writes a rollback journal.
 * A `-journal` found beside such a database was put there by something else, and SQLite would
 * roll the pages it holds into the database as it opens it: a way to replace the accounts
 * wholesale for whoever can leave a file there. It is removed before the database is opened.
 */
function dropStrayJournal(file: string): void {
  const header = Buffer.alloc(20);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return;
  }
  try {
    if (fs.readSync(fd, header, 0, header.length, 0) < header.length) return;
  } finally {
    fs.closeSync(fd);
  }
  // Bytes 18 and 19 of the header, the file format's write and read versions, are 2 in WAL mode.
  if (header[18] !== 2 || header[19] !== 2) return;
  fs.rmSync(`${file}-journal`, { force: true });
}

function statMode(file: string): number | undefined {
  try {
    return fs.statSync(file).mode & 0o7777;
  } catch {
    return undefined;
  }
}

/** Schema version before username keys became NFKC (tests build older databases with it). */
export const SCHEMA_BEFORE_NFKC_KEYS = 4;

/** Applies the migrations up to schema version `upTo` (all by default). */
export function migrate(db: Db, upTo = MIGRATIONS.length): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let v = current; v < upTo; v++) {
    db.transaction(() => {
      const step = MIGRATIONS[v]!;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
