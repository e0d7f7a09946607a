/**
 * The one error type services throw. The HTTP layer maps `kind` to a status code and the
 * plain-text body File Browser clients expect ("403 Forbidden\n", "400 Bad Request (why)\n").
 */
export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'locked'
  | 'too_many_requests'
  | 'not_implemented'
  | 'service_unavailable'
  | 'insufficient_storage'
  | 'bad_gateway'
  | 'internal';

export const STATUS_OF: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  locked: 423,
  too_many_requests: 429,
  not_implemented: 501,
  service_unavailable: 503,
  insufficient_storage: 507,
  bad_gateway: 502,
  internal: 500,
};

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message = '',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
  get status(): number {
    return STATUS_OF[this.kind];
  }
  /**
   * Whether the message may reach the client. A client error's always may; of the server's, only
   * those about a condition the user can act on (a full disk), never an internal one, whose
   * message may name server paths or drivers.
   */
  get told(): boolean {
    return this.status < 500 || TOLD_SERVER_ERRORS.has(this.kind);
  }
}

const TOLD_SERVER_ERRORS = new Set<ErrorKind>(['service_unavailable', 'insufficient_storage']);

export const badRequest = (message = '') => new AppError('bad_request', message);
export const unauthorized = (message = '') => new AppError('unauthorized', message);
export const forbidden = (message = '') => new AppError('forbidden', message);
export const notFound = (message = '') => new AppError('not_found', message);
export const conflict = (message = '') => new AppError('conflict', message);

/** The longest name (one path segment) Linux file systems and macOS take, in bytes. */
export const NAME_MAX_BYTES = 255;

/** Seconds a client is asked to wait when the server is out of file descriptors. */
const BUSY_RETRY_SECONDS = '5';

/**
 * Node's file-system (and SQLite's) error codes, translated at the boundary so driver messages
 * never reach a client, and so a condition the user can act on says what it is in words.
 * EXDEV never gets here: a move across file systems copies instead (files/ops.ts).
 */
export function fromSystemError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (isDatabaseAway(err)) {
    return new AppError(
      'service_unavailable',
      'the database cannot be reached at the moment: try again shortly',
      {
        'Retry-After': BUSY_RETRY_SECONDS,
      },
    );
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      // A path through a file names nothing, as File Browser answered.
      return notFound();
    case 'EEXIST':
      return conflict('an entry with this name exists');
    case 'ENOTEMPTY':
      return conflict('the folder is not empty');
    case 'EISDIR':
      return conflict('a folder is where a file is expected');
    case 'ENAMETOOLONG':
      // A name longer than the file system allows can name nothing: the request is at fault.
      return badRequest(`a name in the path is too long: a name may have at most ${NAME_MAX_BYTES} bytes`);
    case 'EROFS':
      return forbidden('the folder is read-only');
    case 'EACCES':
    case 'EPERM':
      return forbidden('the file system does not allow the server to do this here');
    case 'ENOSPC':
    case 'SQLITE_FULL':
      return new AppError('insufficient_storage', 'the disk is full: free some space and try again');
    case 'EDQUOT':
      return new AppError(
        'insufficient_storage',
        "the disk quota of the server's account is used up: free some space and try again",
      );
    case 'EFBIG':
      return new AppError('payload_too_large', 'the file is larger than the file system allows');
    case 'EMFILE':
    case 'ENFILE':
      return new AppError(
        'service_unavailable',
        'the server has too many files open at the moment: try again shortly',
        { 'Retry-After': BUSY_RETRY_SECONDS },
      );
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
    case '23505': // PostgreSQL's unique_violation
      return conflict();
    default:
      return undefined;
  }
}

/** Whether an error means the disk (or the account's quota) is full. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * PostgreSQL's answers (and the driver's) when the database went away: refused or cut
 * connections, a server shutting down or starting, no connection slot free. The pool makes new
 * connections when it comes back, so the request is worth trying again.
 */
const DATABASE_AWAY_CODES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

export function isDatabaseAway(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  // Marked where the store's connections are made (store/postgres.ts).
  if ((err as { databaseAway?: boolean }).databaseAway === true) return true;
  const code = (err as NodeJS.ErrnoException).code;
  return code !== undefined && DATABASE_AWAY_CODES.has(code);
}
