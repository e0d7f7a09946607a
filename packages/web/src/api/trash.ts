import type { TrashItem, TrashRestoreResult } from '@filebrowser/contract';
import { request, requestJson } from './client';

/** The signed-in user's trash, newest first. */
export function listTrash(): Promise<TrashItem[]> {
  return requestJson<TrashItem[]>('/api/trash');
}

/** How a restore meets a name already taken at the original place. */
export type RestoreMode = 'ask' | 'rename' | 'override';

/** Puts an item back where it was; with mode `ask`, a taken name fails with 409. */
export function restoreTrashItem(id: string, mode: RestoreMode = 'ask'): Promise<TrashRestoreResult> {
  const query = mode === 'ask' ? '' : `?${mode}=true`;
  return requestJson<TrashRestoreResult>(`/api/trash/${encodeURIComponent(id)}/restore${query}`, {
    method: 'POST',
  });
}

export async function deleteTrashItem(id: string): Promise<void> {
  await request(`/api/trash/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

export async function emptyTrash(): Promise<void> {
  await request('/api/trash', { method: 'DELETE' });
}
