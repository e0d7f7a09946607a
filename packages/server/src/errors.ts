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
}

export const badRequest = (message = '') => new AppError('bad_request', message);
export const unauthorized = (message = '') => new AppError('unauthorized', message);
export const forbidden = (message = '') => new AppError('forbidden', message);
export const notFound = (message = '') => new AppError('not_found', message);
export const conflict = (message = '') => new AppError('conflict', message);

/** Node's file-system error codes, translated at the boundary so driver messages never reach a client. */
export function fromSystemError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return notFound();
    case 'EEXIST':
    case 'ENOTEMPTY':
      return conflict();
    case 'ENAMETOOLONG':
      // A name longer than the file system allows can name nothing: the request is at fault.
      return badRequest('a name in the path is too long');
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return forbidden();
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
      return conflict();
    default:
      return undefined;
  }
}
