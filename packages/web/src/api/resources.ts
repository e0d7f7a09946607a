import type { ArchiveFormat, ChecksumAlgorithm, FileInfo, FileItem, Usage } from '@filebrowser/contract';
import { encodePath, trimTrailingSlash } from '../utils/paths';
import { apiURL, request, requestJson } from './client';

export function fetchResource(path: string, signal?: AbortSignal): Promise<FileInfo> {
  return requestJson<FileInfo>(`/api/resources${encodePath(path)}`, { signal });
}

/** Creates a folder; the trailing slash is what tells the server it is one. */
export async function createFolder(path: string): Promise<void> {
  const folder = path.endsWith('/') ? path : `${path}/`;
  await request(`/api/resources${encodePath(folder)}`, { method: 'POST' });
}

/** Creates an empty file; answers 409 when something already exists there. */
export async function createFile(path: string): Promise<void> {
  await request(`/api/resources${encodePath(path)}?override=false`, { method: 'POST', body: '' });
}

export async function deleteResource(path: string): Promise<void> {
  await request(`/api/resources${encodePath(trimTrailingSlash(path))}`, { method: 'DELETE' });
}

/** What PATCH calls a move: `rename` (a move is a rename to another folder). */
export type TransferAction = 'copy' | 'rename';

export interface TransferOptions {
  /** Replace what is already at the destination. */
  override?: boolean;
  /** Let the server pick a free name ("name(1).ext") when the destination is taken. */
  rename?: boolean;
}

/**
 * Copies or moves one entry to a full destination path. The server decodes the destination once
 * more than the query layer does (contract 5.6), so it is encoded twice.
 */
export async function transfer(
  action: TransferAction,
  from: string,
  to: string,
  { override = false, rename = false }: TransferOptions = {},
): Promise<void> {
  const destination = encodeURIComponent(encodePath(trimTrailingSlash(to)));
  const query = `action=${action}&destination=${destination}&override=${override}&rename=${rename}`;
  await request(`/api/resources${encodePath(trimTrailingSlash(from))}?${query}`, { method: 'PATCH' });
}

export async function fetchChecksum(path: string, algorithm: ChecksumAlgorithm): Promise<string> {
  const info = await requestJson<FileInfo>(`/api/resources${encodePath(path)}?checksum=${algorithm}`);
  const sum = info.checksums?.[algorithm];
  if (!sum) throw new Error(`The server sent no ${algorithm} checksum.`);
  return sum;
}

export function fetchUsage(path: string, signal?: AbortSignal): Promise<Usage> {
  return requestJson<Usage>(`/api/usage${encodePath(path)}`, { signal });
}

/** The download address of a file; the browser authenticates it with the auth cookie. */
export function downloadURL(path: string, { inline = false }: { inline?: boolean } = {}): string {
  return apiURL(`/api/raw${encodePath(path)}${inline ? '?inline=true' : ''}`);
}

/**
 * The address of an archive of one folder or of several entries. Several entries go in the
 * `files` list relative to the root, each encoded twice (the server decodes them once more).
 */
export function archiveURL(paths: string[], format: ArchiveFormat): string {
  if (paths.length === 1 && paths[0] !== undefined) {
    return apiURL(`/api/raw${encodePath(paths[0])}?algo=${format}`);
  }
  const files = paths.map((path) => encodeURIComponent(encodeURIComponent(trimTrailingSlash(path))));
  return apiURL(`/api/raw/?files=${files.join(',')}&algo=${format}`);
}

/** A 256 px thumbnail of an image; the modification time busts the browser cache when the file changes. */
export function thumbnailURL(item: Pick<FileItem, 'path' | 'modified'>): string {
  const key = Date.parse(item.modified);
  return apiURL(`/api/preview/thumb${encodePath(item.path)}?inline=true&key=${Number.isNaN(key) ? 0 : key}`);
}
