import type { Settings } from '@filebrowser/contract';
import { request, requestJson } from './client';

export function getSettings(): Promise<Settings> {
  return requestJson<Settings>('/api/settings');
}

export async function updateSettings(settings: Settings): Promise<void> {
  await request('/api/settings', { method: 'PUT', json: settings });
}
