import { SHARE_PASSWORD_HEADER, type FileInfo, type Share, type ShareUnit } from '@filebrowser/contract';
import { startup } from '../startup';
import { encodePath } from '../utils/paths';
import { apiURL, request, requestJson } from './client';

export function listShares(): Promise<Share[]> {
  return requestJson<Share[]>('/api/shares');
}

/** The caller's links to one virtual path (folders end with a slash, as the server stores them). */
export function sharesOfPath(path: string): Promise<Share[]> {
  return requestJson<Share[]>(`/api/share${encodePath(path)}`);
}

export interface NewShare {
  /** Trimmed; empty means no password. */
  password: string;
  /** A whole number as text; empty means the link never expires. */
  expires: string;
  unit: ShareUnit;
}

export function createShare(path: string, share: NewShare): Promise<Share> {
  return requestJson<Share>(`/api/share${encodePath(path)}`, { method: 'POST', json: share });
}

export async function deleteShare(hash: string): Promise<void> {
  await request(`/api/share/${encodeURIComponent(hash)}`, { method: 'DELETE' });
}

/** The public address of a share link. */
export function shareLink(hash: string): string {
  return `${window.location.origin}${startup.BaseURL}/share/${encodeURIComponent(hash)}`;
}

/** How a visitor proves they know a link's password: the password once, then the token it earned. */
export interface ShareCredentials {
  password?: string;
  token?: string;
}

function tokenQuery(token: string | undefined): string {
  return token ? `?token=${encodeURIComponent(token)}` : '';
}

/** GET /api/public/share: a 401 means the link wants a password (or the token expired). */
export function fetchPublicShare(
  hash: string,
  path: string,
  credentials: ShareCredentials,
  signal?: AbortSignal,
): Promise<FileInfo> {
  const headers: Record<string, string> = {};
  // Sent URL-encoded so that any character survives the header (contract 8.5).
  if (credentials.password) headers[SHARE_PASSWORD_HEADER] = encodeURIComponent(credentials.password);
  return requestJson<FileInfo>(
    `/api/public/share/${encodeURIComponent(hash)}${encodePath(path)}${tokenQuery(credentials.token)}`,
    { headers, authenticated: false, signal },
  );
}

export interface PublicDownloadOptions {
  token?: string;
  inline?: boolean;
  /** Archive format of a folder download. */
  algo?: string;
  /** Items of the folder to put in the archive, as paths relative to the share. */
  files?: string[];
}

/**
 * A download address of a share: the token travels in the query because a browser following a
 * link cannot send headers. `path` is relative to the share root ("" for the shared file itself).
 */
export function publicDownloadURL(hash: string, path: string, opts: PublicDownloadOptions = {}): string {
  const query = new URLSearchParams();
  if (opts.files?.length) {
    // The server reads `files` as comma-separated, each item percent-decoded once more.
    query.set('files', opts.files.map((file) => encodeURIComponent(file)).join(','));
  }
  if (opts.algo) query.set('algo', opts.algo);
  if (opts.inline) query.set('inline', 'true');
  if (opts.token) query.set('token', opts.token);
  const search = query.toString();
  return apiURL(`/api/public/dl/${encodeURIComponent(hash)}${encodePath(path)}${search ? `?${search}` : ''}`);
}

/** The same address with the origin, for copying and QR codes. */
export function absoluteURL(url: string): string {
  return new URL(url, window.location.origin).toString();
}
