import type { FileItem } from '@filebrowser/contract';
import { cleanup, fireEvent } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderWithApp } from '../../../test/render';
import { ListingItem, type ItemInteractions } from './ListingItem';
import type { ViewMode } from './listing-layout';

const interactions: ItemInteractions = {
  click: vi.fn(),
  keyDown: vi.fn(),
  dragStart: vi.fn(),
  canDrop: () => false,
  drop: vi.fn(),
};

function entry(name: string, overrides: Partial<FileItem> = {}): FileItem {
  return {
    path: `/${name}`,
    name,
    size: 1024,
    extension: name.includes('.') ? name.slice(name.lastIndexOf('.')) : '',
    modified: '2026-01-02T03:04:05Z',
    mode: 0o644,
    isDir: false,
    isSymlink: false,
    type: 'blob',
    ...overrides,
  };
}

async function show(item: FileItem, mode: ViewMode, thumbnails = false) {
  const { container } = await renderWithApp(
    <ListingItem
      item={item}
      index={0}
      mode={mode}
      draggable={false}
      cut={false}
      dateFormat={false}
      thumbnails={thumbnails}
      interactions={interactions}
    />,
  );
  return container.querySelector<HTMLElement>('.item')!;
}

describe('ListingItem', () => {
  afterEach(cleanup);

  it('shows the same type icon in the list and the mosaic', async () => {
    for (const [name, glyph, kind] of [
      ['budget.xlsx', 'table_chart', 'spreadsheet'],
      ['backup.tar.gz', 'folder_zip', 'archive'],
      ['main.go', 'code', 'code'],
      ['talk.odp', 'slideshow', 'presentation'],
      ['debian.iso', 'album', 'diskImage'],
      ['unknown.qqq', 'insert_drive_file', 'unknown'],
    ] as const) {
      const icons = [];
      for (const mode of ['list', 'mosaic', 'mosaic gallery'] as const) {
        const icon = (await show(entry(name), mode)).querySelector('.item__icon')!;
        icons.push([icon.textContent, icon.classList.contains(`item__icon--${kind}`)]);
        cleanup();
      }
      expect(icons, name).toEqual([
        [glyph, true],
        [glyph, true],
        [glyph, true],
      ]);
    }
  });

  it('holds the place of a thumbnail with a neutral placeholder until the picture has loaded', async () => {
    const item = await show(entry('photo.jpg', { type: 'image' }), 'mosaic', true);
    const img = item.querySelector('img')!;
    const placeholder = () => item.querySelector('.item__thumb-placeholder');
    expect(placeholder()?.textContent).toBe('image');
    expect(placeholder()?.classList.contains('item__icon--image')).toBe(false);
    expect(img.classList.contains('item__thumb--loaded')).toBe(false);

    fireEvent.load(img);
    expect(placeholder()).toBeNull();
    expect(img.classList.contains('item__thumb--loaded')).toBe(true);
  });

  it('shows the image icon when the thumbnail cannot be made', async () => {
    const item = await show(entry('broken.jpg', { type: 'image' }), 'mosaic', true);
    fireEvent.error(item.querySelector('img')!);
    expect(item.querySelector('img')).toBeNull();
    expect(item.querySelector('.item__icon--image')?.textContent).toBe('image');
  });

  it('dims dotfiles and dot-folders, and only them', async () => {
    for (const mode of ['list', 'mosaic'] as const) {
      expect((await show(entry('.env'), mode)).classList.contains('item--dotfile'), mode).toBe(true);
      cleanup();
      expect((await show(entry('.git', { isDir: true }), mode)).classList.contains('item--dotfile')).toBe(
        true,
      );
      cleanup();
      expect((await show(entry('env.'), mode)).classList.contains('item--dotfile')).toBe(false);
      cleanup();
    }
  });
});
