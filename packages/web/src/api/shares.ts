import type { Share } from '@filebrowser/contract';
import { startup } from '../startup';
import { request, requestJson } from './client';

export function listShares(): Promise<Share[]> {
  return requestJson<Share[]>('/api/shares');
}

export async function deleteShare(hash: string): Promise<void> {
  await request(`/api/share/${encodeURIComponent(hash)}`, { method: 'DELETE' });
}

/** The public address of a share link. */
export function shareLink(hash: string): string {
  return `${window.location.origin}${startup.BaseURL}/share/${encodeURIComponent(hash)}`;
}
