import type { FileInfo, Usage } from '@filebrowser/contract';
import { encodePath } from '../utils/paths';
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

export function fetchUsage(path: string, signal?: AbortSignal): Promise<Usage> {
  return requestJson<Usage>(`/api/usage${encodePath(path)}`, { signal });
}

/** The download address of a file; the browser authenticates it with the auth cookie. */
export function downloadURL(path: string): string {
  return apiURL(`/api/raw${encodePath(path)}`);
}
