import type { FileItem } from '@filebrowser/contract';
import { encodePath } from '../utils/paths';
import { apiURL, request } from './client';

// What the preview and the editor need from the server. Media elements and frames cannot send
// the X-Auth header: the browser authenticates these GET addresses with the auth cookie.

/** The file itself, to be shown by the browser rather than downloaded. */
export function inlineURL(path: string): string {
  return apiURL(`/api/raw${encodePath(path)}?inline=true`);
}

/**
 * The screen-sized rendition of an image (at most 1080 px a side). The modification time busts
 * the browser's cache when the file changes; the server ignores it.
 */
export function bigPreviewURL(file: Pick<FileItem, 'path' | 'modified'>): string {
  const key = Date.parse(file.modified);
  return apiURL(`/api/preview/big${encodePath(file.path)}?inline=true&key=${Number.isNaN(key) ? 0 : key}`);
}

/** A subtitle file of a video, converted to WebVTT by the server. */
export function subtitleURL(path: string): string {
  return apiURL(`/api/subtitle${encodePath(path)}?inline=true`);
}

/** Overwrites a file with new text (the editor's save). */
export async function saveFileContent(path: string, content: string): Promise<void> {
  await request(`/api/resources${encodePath(path)}`, {
    method: 'PUT',
    body: content,
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
  });
}
