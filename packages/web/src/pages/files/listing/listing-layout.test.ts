import type { FileItem } from '@filebrowser/contract';
import { describe, expect, it } from 'vitest';
import {
  buildRows,
  columnsFor,
  nextViewMode,
  normalizeViewMode,
  rowHeight,
  splitEntries,
} from './listing-layout';
import { isAscending, nextSorting } from './sorting';

const item = (name: string, isDir: boolean) => ({ name, path: `/${name}`, isDir }) as FileItem;

describe('view modes', () => {
  it('cycles list, mosaic, mosaic gallery and back to list', () => {
    expect(nextViewMode('list')).toBe('mosaic');
    expect(nextViewMode('mosaic')).toBe('mosaic gallery');
    expect(nextViewMode('mosaic gallery')).toBe('list');
  });

  it('treats an unknown or empty mode as the list', () => {
    expect(normalizeViewMode('')).toBe('list');
    expect(normalizeViewMode('tiles')).toBe('list');
    expect(nextViewMode('whatever')).toBe('mosaic');
  });

  it('fits mosaic tiles from a 280 px base width, at least two in a row', () => {
    expect(columnsFor('list', 1000)).toBe(1);
    expect(columnsFor('mosaic', 980)).toBe(3);
    expect(columnsFor('mosaic', 1200)).toBe(4);
    expect(columnsFor('mosaic', 350)).toBe(2);
    expect(columnsFor('mosaic gallery', 980)).toBe(4);
  });
});

describe('rows', () => {
  it('puts folders before files and keeps the server order within each', () => {
    const { ordered, dirCount } = splitEntries([
      item('b.txt', false),
      item('z', true),
      item('a.txt', false),
      item('c', true),
    ]);
    expect(ordered.map((entry) => entry.name)).toEqual(['z', 'c', 'b.txt', 'a.txt']);
    expect(dirCount).toBe(2);
  });

  it('gives the list one row per entry and no headings', () => {
    const rows = buildRows(2, 3, 'list', 1);
    expect(rows.map((row) => (row.kind === 'items' ? [row.start, row.end] : row.section))).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 5],
    ]);
  });

  it('groups tiles by section, `columns` to a row, without mixing folders and files', () => {
    const rows = buildRows(4, 5, 'mosaic', 3);
    expect(rows.map((row) => (row.kind === 'items' ? [row.start, row.end] : row.section))).toEqual([
      'folders',
      [0, 3],
      [3, 4],
      'files',
      [4, 7],
      [7, 9],
    ]);
  });

  it('leaves out an empty section', () => {
    expect(buildRows(0, 2, 'mosaic gallery', 4).map((row) => row.kind)).toEqual(['section', 'items']);
    expect(buildRows(0, 0, 'mosaic', 4)).toEqual([]);
  });

  it('handles 100,000 entries', () => {
    const rows = buildRows(1000, 99_000, 'mosaic', 4);
    expect(rows).toHaveLength(2 + 250 + 24_750);
  });

  it('makes gallery rows as tall as their square tiles', () => {
    const row = { kind: 'items', start: 0, end: 4, key: 'r' } as const;
    expect(rowHeight(row, 'mosaic gallery', 800, 4, false)).toBe(Math.floor((800 - 36) / 4) + 12);
    expect(rowHeight(row, 'list', 800, 1, true)).toBeGreaterThan(rowHeight(row, 'list', 800, 1, false));
  });
});

describe('sorting', () => {
  it('reads the inverted name flag of the wire as A→Z', () => {
    expect(isAscending({ by: 'name', asc: false })).toBe(true);
    expect(isAscending({ by: 'name', asc: true })).toBe(false);
    expect(isAscending({ by: 'size', asc: true })).toBe(true);
    expect(isAscending({ by: 'modified', asc: false })).toBe(false);
  });

  it('flips the direction of the sorted column', () => {
    expect(nextSorting({ by: 'size', asc: false }, 'size')).toEqual({ by: 'size', asc: true });
    expect(nextSorting({ by: 'name', asc: true }, 'name')).toEqual({ by: 'name', asc: false });
  });

  it('starts another column with A→Z names, largest sizes or newest dates', () => {
    expect(nextSorting({ by: 'size', asc: true }, 'name')).toEqual({ by: 'name', asc: false });
    expect(nextSorting({ by: 'name', asc: false }, 'modified')).toEqual({ by: 'modified', asc: false });
  });
});
