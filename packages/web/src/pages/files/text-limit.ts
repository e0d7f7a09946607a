import { TEXT_CONTENT_LIMIT, type FileInfo } from '@filebrowser/contract';

/**
 * A text file the server sent without its content because it is past TEXT_CONTENT_LIMIT: it
 * opens for download, since an editor over nothing would save an empty file over it.
 */
export function tooLargeToEdit(file: Pick<FileInfo, 'type' | 'content' | 'size'>): boolean {
  const text = file.type === 'text' || file.type === 'textImmutable';
  return text && file.content === undefined && file.size > TEXT_CONTENT_LIMIT;
}
