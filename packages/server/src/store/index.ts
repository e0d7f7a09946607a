import crypto from 'node:crypto';
import { AuditRepo } from './audit.js';
import { AttemptsRepo } from './attempts.js';
import { ReservationsRepo } from './reservations.js';
import { JobsRepo } from './jobs.js';
import { InstancesRepo } from './instances.js';
import { answeredWithin, untilStored } from './until-stored.js';

/** How long `/health` waits for the database to answer before it says it does not. */
const PING_TIMEOUT_MS = 5_000;
import { localLockLine, postgresLockLine, type LockLine } from './lock-line.js';
import { localNotices, postgresNotices, type Notices } from './notices.js';
import { DavLocksRepo, DavPropsRepo } from './dav.js';
import { sql as raw } from 'kysely';
import { isNewDatabase, openDatabase, SCHEMA_VERSION } from './db.js';
import { isNewPostgres, openPostgres } from './postgres.js';
import { isPostgresUrl, sqliteSql, type Dialect, type Sql } from './sql.js';
import { MovesRepo } from './moves.js';
import { SessionsRepo } from './sessions.js';
import { SettingsRepo } from './settings.js';
import { ShareGrantsRepo } from './share-grants.js';
import { SharesRepo } from './shares.js';
import { StagingRepo } from './staging.js';
import { TrashRepo } from './trash.js';
import { UploadCreationsRepo, UploadsRepo } from './uploads.js';
import { ScopeUsageRepo } from './scope-usage.js';
import { ApiTokensRepo } from './tokens.js';
import { UsersRepo } from './users.js';

/** Every repository, over one database connection or one transaction on it. */
export interface Repos {
  users: UsersRepo;
  settings: SettingsRepo;
  sessions: SessionsRepo;
  shares: SharesRepo;
  /** What a correct share password earned (shares/links.ts). */
  shareGrants: ShareGrantsRepo;
  uploads: UploadsRepo;
  apiTokens: ApiTokensRepo;
  staging: StagingRepo;
  /** Moves across file systems in progress (files/moves.ts). */
  moves: MovesRepo;
  davProps: DavPropsRepo;
  davLocks: DavLocksRepo;
  trash: TrashRepo;
  audit: AuditRepo;
  scopeUsage: ScopeUsageRepo;
  /** The servers running on this database (instance.ts). */
  instances: InstancesRepo;
  /** Guesses counted for every instance on the database (auth/rate-limit.ts). */
  attempts: AttemptsRepo;
  /** What writes in progress hold back from the quotas, per instance (files/change/quota.ts). */
  reservations: ReservationsRepo;
  jobs: JobsRepo;
  uploadCreations: UploadCreationsRepo;
}

export interface Store extends Repos {
  /**
   * This opening of the database, among the servers on it: its id stamps the records of work it
   * has in progress. `shared` when several instances may run on the database at once (PostgreSQL);
   * on a SQLite file one server process holds it (server-lock.ts).
   */
  instance: { id: string; shared: boolean };
  /** What this instance tells the others and hears from them (notices.ts). */
  notices: Notices;
  /**
   * Runs `work` unless another instance (or this one) is running work of that `name`: then
   * answers undefined at once. What every instance does on a timer is thus done once at a time.
   */
  exclusively<T>(name: string, work: () => Promise<T>): Promise<T | undefined>;
  /** Locks that one instance at a time holds, for work that outlasts a query (lock-line.ts). */
  lockLine: LockLine;
  /** The query layer every repository goes through (store/sql.ts). */
  sql: Sql;
  dialect: Dialect;
  /**
   * Runs `work` in one transaction: what it does through the repositories it is given happens
   * all together or, when it throws, not at all.
   */
  transaction<T>(work: (tx: Repos) => Promise<T>): Promise<T>;
  /** Rejects when the database cannot answer a query (closed, unreachable): what /health checks. */
  ping(): Promise<void>;
  /**
   * Runs a write that must not be lost to an outage until it is stored (until-stored.ts): tried
   * again while the database is away, until the store closes.
   */
  untilStored<T>(write: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

function reposOn(sql: Sql, settings: SettingsRepo, instance: string): Repos {
  return {
    users: new UsersRepo(sql),
    settings,
    sessions: new SessionsRepo(sql),
    shares: new SharesRepo(sql),
    shareGrants: new ShareGrantsRepo(sql),
    uploads: new UploadsRepo(sql),
    apiTokens: new ApiTokensRepo(sql),
    staging: new StagingRepo(sql, instance),
    moves: new MovesRepo(sql, instance),
    davProps: new DavPropsRepo(sql),
    davLocks: new DavLocksRepo(sql),
    trash: new TrashRepo(sql),
    audit: new AuditRepo(sql),
    scopeUsage: new ScopeUsageRepo(sql),
    instances: new InstancesRepo(sql),
    attempts: new AttemptsRepo(sql),
    reservations: new ReservationsRepo(sql),
    jobs: new JobsRepo(sql, instance),
    uploadCreations: new UploadCreationsRepo(sql, instance),
  };
}

/** Work of one name runs once at a time in this process. */
function exclusiveHere(): <T>(name: string, work: () => Promise<T>) => Promise<T | undefined> {
  const running = new Set<string>();
  return async (name, work) => {
    if (running.has(name)) return undefined;
    running.add(name);
    try {
      return await work();
    } finally {
      running.delete(name);
    }
  };
}

/** Work of one name runs once at a time across the instances (a session-level advisory lock). */
function exclusiveAcross(sql: Sql): <T>(name: string, work: () => Promise<T>) => Promise<T | undefined> {
  const here = exclusiveHere();
  return (name, work) =>
    here(name, () =>
      sql.connection().execute(async (conn) => {
        const key = `filebrowser:${name}`;
        const got = await raw<{ got: boolean }>`SELECT pg_try_advisory_lock(hashtext(${key})) AS got`.execute(
          conn,
        );
        if (!got.rows[0]?.got) return undefined;
        try {
          return await work();
        } finally {
          await raw`SELECT pg_advisory_unlock(hashtext(${key}))`.execute(conn);
        }
      }),
    );
}

/** The query layer on the database `database` names, its schema brought up to date; no repository. */
export async function openSql(database: string): Promise<{ sql: Sql; dialect: Dialect }> {
  if (isPostgresUrl(database))
    return { sql: await openPostgres(database, SCHEMA_VERSION), dialect: 'postgres' };
  return { sql: sqliteSql(openDatabase(database)), dialect: 'sqlite' };
}

/**
 * Opens the database `database` names: a PostgreSQL URL (`postgres://…`), or else the path of a
 * SQLite file (the embedded default). Its schema is brought up to date first.
 */
export async function openStore(database: string): Promise<Store> {
  const dialect: Dialect = isPostgresUrl(database) ? 'postgres' : 'sqlite';
  const sql =
    dialect === 'postgres' ? await openPostgres(database, SCHEMA_VERSION) : sqliteSql(openDatabase(database));
  // Settings are kept in memory, one copy for the store and its transactions; they are written
  // outside transactions.
  const settings = new SettingsRepo(sql);
  const instance = { id: crypto.randomBytes(9).toString('base64url'), shared: dialect === 'postgres' };
  let notices: Notices;
  try {
    await settings.load();
    notices = instance.shared ? await postgresNotices(database, sql, instance.id) : localNotices();
  } catch (err) {
    await sql.destroy();
    throw err;
  }
  // Settings changed by another instance are read again.
  settings.changed = () => notices.publish('settings');
  notices.on('settings', () => settings.load());
  const lockLine = instance.shared ? postgresLockLine(database) : localLockLine();
  const closing = new AbortController();
  return {
    sql,
    dialect,
    instance,
    notices,
    exclusively: instance.shared ? exclusiveAcross(sql) : exclusiveHere(),
    lockLine,
    ...reposOn(sql, settings, instance.id),
    transaction: (work) => sql.transaction().execute((trx) => work(reposOn(trx, settings, instance.id))),
    ping: async () => {
      await answeredWithin(raw`SELECT 1`.execute(sql), PING_TIMEOUT_MS);
    },
    untilStored: (write) => untilStored(write, closing.signal),
    close: async () => {
      closing.abort();
      await lockLine.close();
      await notices.close();
      await sql.destroy();
    },
  };
}

/**
 * True when `database` holds no File Browser data yet (a SQLite file absent or empty, a
 * PostgreSQL database without the schema): the first start, which sets up an administrator.
 */
export async function isNewStore(database: string): Promise<boolean> {
  return isPostgresUrl(database) ? isNewPostgres(database) : isNewDatabase(database);
}
