import type { DavLockInfo } from '@filebrowser/contract';
import { request, requestJson } from './client';

/** Every WebDAV lock in force (administrators). */
export function listLocks(): Promise<DavLockInfo[]> {
  return requestJson<DavLockInfo[]>('/api/dav/locks');
}

/** Breaks a WebDAV lock (administrators). */
export async function breakLock(token: string): Promise<void> {
  await request(`/api/dav/locks/${encodeURIComponent(token)}`, { method: 'DELETE' });
}
