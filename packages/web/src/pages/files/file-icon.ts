import type { FileItem } from '@filebrowser/contract';

const ICONS_BY_TYPE: Record<string, string> = {
  image: 'image',
  video: 'movie',
  audio: 'audiotrack',
  pdf: 'picture_as_pdf',
  text: 'description',
  textImmutable: 'description',
  invalid_link: 'link_off',
};

/** The Material icon that stands for an entry of a listing. */
export function fileIcon(item: Pick<FileItem, 'isDir' | 'type'>): string {
  if (item.isDir) return 'folder';
  return ICONS_BY_TYPE[item.type] ?? 'insert_drive_file';
}
