/**
 * The tables as the query layer (Kysely) sees them, the same in SQLite and PostgreSQL. Times are
 * Unix milliseconds (BIGINT in PostgreSQL, read back as numbers); flags are 0 or 1 in both.
 * The migrations that make these tables are in db.ts (SQLite) and postgres-schema.ts.
 */
import type { Generated } from 'kysely';

export interface ConfigTable {
  key: string;
  value: string;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  username_key: string;
  password_hash: string;
  profile: string;
  updated_at: number;
}

export interface SessionsTable {
  id_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
}

/** A session renewed into another (POST /api/renew): work started in the first follows it. */
export interface SessionRenewalsTable {
  from_hash: string;
  to_hash: string;
  renewed_at: number;
}

export interface SharesTable {
  hash: string;
  path: string;
  user_id: number;
  expire: number;
  password_hash: string;
  created_at: number;
  root_id: string;
  root_path: string;
  item_id: string;
}

export interface ShareGrantsTable {
  token_hash: string;
  share_hash: string;
  expires_at: number;
}

export interface UploadsTable {
  id: string;
  user_id: number;
  path: string;
  length: number;
  override: number;
  staging: string;
  created_at: number;
  updated_at: number;
}

export interface ApiTokensTable {
  id: string;
  user_id: number;
  name: string;
  secret_hash: string;
  read_only: number;
  root_path: string;
  created_at: number;
  expires_at: number;
  last_used_at: number;
}

export interface StagingFilesTable {
  id: Generated<number>;
  folder: string;
  name: string;
  created_at: number;
  /** The instance whose write made it (instances.id). */
  instance: Generated<string>;
}

export interface DavPropsTable {
  root_id: string;
  path: string;
  ns: string;
  name: string;
  xml: string;
  user_id: number;
}

export interface DavLocksTable {
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
  /** The API token it was taken with: revoking the token removes the lock (ON DELETE CASCADE). */
  api_token: string | null;
}

export interface TrashTable {
  id: string;
  user_id: number;
  root_id: string;
  root_path: string;
  path: string;
  size: number;
  is_dir: number;
  deleted_by: string;
  deleted_at: number;
  location: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  time: number;
  user_id: number;
  username: string;
  address: string;
  action: string;
  path: string;
  destination: string;
  status: number;
  detail: string;
}

export interface MovesTable {
  id: Generated<number>;
  source_folder: string;
  source_name: string;
  source_id: string;
  hidden_name: string;
  dest_folder: string;
  staging_name: string;
  dest_name: string;
  phase: string;
  created_at: number;
  /** The instance doing the move (instances.id). */
  instance: Generated<string>;
}

/** Guesses counted in a fixed window per kind of counter and key (auth/rate-limit.ts). */
export interface AttemptsTable {
  kind: string;
  key: string;
  count: number;
  reset_at: number;
}

/**
 * Bytes held back from one quota'd scope by a holder: an instance (its writes in progress) or a
 * pending resumable upload (`upload:<id>`, which any instance may go on with).
 */
export interface QuotaReservationsTable {
  holder: string;
  scope: string;
  bytes: number;
}

/**
 * A copy, move or followed archive download (jobs/registry.ts), as every instance on the database
 * sees it: the instance doing the work writes its progress and end here, and another asks it to
 * stop through `cancel_requested`.
 */
export interface JobsTable {
  user_id: number;
  id: string;
  instance: string;
  confined_to: string | null;
  action: string;
  state: string;
  /** JSON array of the paths. */
  items: string;
  destination: string;
  bytes_done: number;
  bytes_total: number;
  items_done: number;
  items_total: number;
  started_at: number;
  ended_at: number | null;
  error: string | null;
  status: number | null;
  cancel_requested: number;
}

/** A resumable upload being created, counted against its user's pending limits by every instance. */
export interface UploadCreationsTable {
  id: string;
  user_id: number;
  bytes: number;
  instance: string;
}

/** A running server on this database, and when it last said so. */
export interface InstancesTable {
  id: string;
  host: string;
  pid: number;
  started_at: number;
  seen_at: number;
}

export interface ScopeUsageTable {
  root_id: string;
  scope: string;
  bytes: number;
  counted_at: number;
}

export interface Schema {
  config: ConfigTable;
  users: UsersTable;
  sessions: SessionsTable;
  shares: SharesTable;
  share_grants: ShareGrantsTable;
  uploads: UploadsTable;
  api_tokens: ApiTokensTable;
  staging_files: StagingFilesTable;
  dav_props: DavPropsTable;
  dav_locks: DavLocksTable;
  trash: TrashTable;
  audit_log: AuditLogTable;
  moves: MovesTable;
  scope_usage: ScopeUsageTable;
  instances: InstancesTable;
  attempts: AttemptsTable;
  quota_reservations: QuotaReservationsTable;
  jobs: JobsTable;
  upload_creations: UploadCreationsTable;
  session_renewals: SessionRenewalsTable;
}

/**
 * Every table, parents before the tables whose rows name them (users before sessions, shares
 * before share grants): the order in which a copy inserts them with every foreign key holding.
 */
export const TABLES: ReadonlyArray<keyof Schema> = [
  'config',
  'users',
  'sessions',
  'shares',
  'share_grants',
  'uploads',
  'api_tokens',
  'staging_files',
  'dav_props',
  'dav_locks',
  'trash',
  'audit_log',
  'moves',
  'scope_usage',
  'instances',
  'attempts',
  'quota_reservations',
  'jobs',
  'upload_creations',
  'session_renewals',
];

/**
 * Each table's primary key, in order: what a copy pages by (store/copy.ts), after the last row
 * it read rather than past a count of rows, so that a long audit log is not read again from its
 * start for every page.
 */
export const PRIMARY_KEYS: { readonly [T in keyof Schema]: ReadonlyArray<keyof Schema[T] & string> } = {
  config: ['key'],
  users: ['id'],
  sessions: ['id_hash'],
  shares: ['hash'],
  share_grants: ['token_hash'],
  uploads: ['id'],
  api_tokens: ['id'],
  staging_files: ['id'],
  dav_props: ['root_id', 'path', 'ns', 'name'],
  dav_locks: ['token'],
  trash: ['id'],
  audit_log: ['id'],
  moves: ['id'],
  scope_usage: ['root_id', 'scope'],
  instances: ['id'],
  attempts: ['kind', 'key'],
  quota_reservations: ['holder', 'scope'],
  jobs: ['user_id', 'id'],
  upload_creations: ['id'],
  session_renewals: ['from_hash'],
};
