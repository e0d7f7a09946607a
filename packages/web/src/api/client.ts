import { AUTH_HEADER, RENEW_HEADER } from '@filebrowser/contract';
import { startup } from '../startup';

/** An API failure: the HTTP status (0 when the server could not be reached) and the server's text. */
export class ApiError extends Error {
  readonly status: number;
  /** Seconds the server asks to wait before trying again (429 answers). */
  readonly retryAfter?: number;

  constructor(status: number, message: string, retryAfter?: number) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    if (retryAfter !== undefined) this.retryAfter = retryAfter;
  }
}

function retryAfterSeconds(response: Response): number | undefined {
  const value = Number(response.headers.get('Retry-After'));
  return Number.isFinite(value) && value > 0 ? Math.ceil(value) : undefined;
}

export const NO_CONNECTION_MESSAGE = '000 No connection';

/** The session hooks the client needs; the auth store plugs itself in at start-up. */
export interface ClientSession {
  token: () => string | null;
  /** Settles when no token renewal is under way, so that a request leaves with the fresh token. */
  settled: () => Promise<void>;
  onRenewRequested: () => void;
  onUnauthorized: () => void;
}

let session: ClientSession = {
  token: () => null,
  settled: () => Promise.resolve(),
  onRenewRequested: () => undefined,
  onUnauthorized: () => undefined,
};

export function connectSession(hooks: ClientSession): void {
  session = hooks;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  method?: HttpMethod;
  /** Sent as a JSON body. */
  json?: unknown;
  /** Sent as is (e.g. file content); ignored when `json` is given. */
  body?: BodyInit;
  headers?: Record<string, string>;
  /** Whether the call carries the session token; false for login, signup and public endpoints. */
  authenticated?: boolean;
  signal?: AbortSignal;
  /** Lets the request outlive the page (a logout sent just before leaving). */
  keepalive?: boolean;
}

export function apiURL(path: string): string {
  return `${startup.BaseURL}${path}`;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/** The server answers errors as plain text such as "403 Forbidden"; anything else is not worth showing. */
async function errorMessage(response: Response): Promise<string> {
  const fallback = `${response.status} ${response.statusText}`.trim();
  try {
    const text = (await response.text()).trim();
    return text && !text.startsWith('<') ? text : fallback;
  } catch {
    return fallback;
  }
}

function isReplayable(body: BodyInit | undefined): boolean {
  return body === undefined || typeof body === 'string' || body instanceof Blob;
}

/** Sends one API request; resolves with the response when it is 2xx, else rejects with an ApiError. */
export async function request(path: string, options: RequestOptions = {}): Promise<Response> {
  const authenticated = options.authenticated ?? true;
  const explicitToken = new Headers(options.headers).has(AUTH_HEADER);
  const body = options.json !== undefined ? JSON.stringify(options.json) : options.body;

  const send = async (token: string | null): Promise<Response> => {
    const headers = new Headers(options.headers);
    if (token) headers.set(AUTH_HEADER, token);
    if (options.json !== undefined) headers.set('Content-Type', 'application/json');
    try {
      return await fetch(apiURL(path), {
        method: options.method ?? 'GET',
        headers,
        body,
        signal: options.signal,
        keepalive: options.keepalive,
        credentials: 'same-origin',
      });
    } catch (error) {
      if (isAbort(error)) throw error;
      throw new ApiError(0, NO_CONNECTION_MESSAGE);
    }
  };

  const usesSession = authenticated && !explicitToken;
  if (usesSession) await session.settled();
  const token = usesSession ? session.token() : null;
  let response = await send(token);

  // A renewal that finished while this request was on its way retires the token it carried:
  // that refusal is not the end of the session, so the request goes again with the new token.
  if (response.status === 401 && usesSession && isReplayable(body)) {
    await session.settled();
    const current = session.token();
    if (current && current !== token) response = await send(current);
  }

  if (authenticated && response.headers.get(RENEW_HEADER) === 'true') session.onRenewRequested();
  if (response.ok) return response;

  const error = new ApiError(response.status, await errorMessage(response), retryAfterSeconds(response));
  if (response.status === 401 && authenticated) session.onUnauthorized();
  throw error;
}

export async function requestJson<T>(path: string, options?: RequestOptions): Promise<T> {
  const response = await request(path, options);
  return (await response.json()) as T;
}

export async function requestText(path: string, options?: RequestOptions): Promise<string> {
  const response = await request(path, options);
  return response.text();
}

/** The status of a failure, 500 for anything that is not an API error. */
export function errorStatus(error: unknown): number {
  return error instanceof ApiError ? error.status : 500;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * For transports that cannot go through `request` (XHR with upload progress, tus-js-client): the
 * token to send, once no renewal is under way.
 */
export async function uploadSessionToken(): Promise<string | null> {
  await session.settled();
  return session.token();
}

/**
 * What `request` does with an answer, for those transports: a renewal asked for is started, and
 * a 401 for the session's current token ends the session (a 401 for a token that a renewal has
 * since replaced does not: the request can go again).
 */
export function noteUploadResponse(
  status: number,
  renewHeader: string | null | undefined,
  sentToken: string | null,
): void {
  if (renewHeader === 'true') session.onRenewRequested();
  if (status === 401 && sentToken !== null && sentToken === session.token()) session.onUnauthorized();
}

/** Whether a renewal replaced `sentToken` since it was sent. */
export function sessionTokenChanged(sentToken: string | null | undefined): boolean {
  const current = session.token();
  return !!current && !!sentToken && current !== sentToken;
}
