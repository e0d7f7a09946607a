import { describe, expect, it } from 'vitest';
import { EMPTY_SELECTION } from '../../../utils/selection';
import { buildRows } from './listing-layout';
import { focusSelection, isMoveKey, moveTarget, rowOf } from './listing-keys';

describe('moveTarget', () => {
  const list = buildRows(2, 3, 'list', 1);
  // Three columns: folders 0 1 | files 2 3 4, 5 6
  const tiles = buildRows(2, 5, 'mosaic', 3);

  it('moves one entry with Up and Down in the list, and ignores Left and Right', () => {
    expect(moveTarget('ArrowDown', 0, 5, list, 'list')).toBe(1);
    expect(moveTarget('ArrowUp', 3, 5, list, 'list')).toBe(2);
    expect(moveTarget('ArrowLeft', 3, 5, list, 'list')).toBeNull();
    expect(moveTarget('ArrowRight', 3, 5, list, 'list')).toBeNull();
  });

  it('stops at the edges', () => {
    expect(moveTarget('ArrowUp', 0, 5, list, 'list')).toBeNull();
    expect(moveTarget('ArrowDown', 4, 5, list, 'list')).toBeNull();
    expect(moveTarget('ArrowLeft', 0, 7, tiles, 'mosaic')).toBeNull();
    expect(moveTarget('ArrowRight', 6, 7, tiles, 'mosaic')).toBeNull();
    expect(moveTarget('ArrowDown', 5, 7, tiles, 'mosaic')).toBeNull();
    expect(moveTarget('Home', 0, 7, tiles, 'mosaic')).toBeNull();
    expect(moveTarget('ArrowDown', 0, 0, [], 'list')).toBeNull();
  });

  it('moves sideways through the tiles, from one section to the next', () => {
    expect(moveTarget('ArrowRight', 1, 7, tiles, 'mosaic')).toBe(2);
    expect(moveTarget('ArrowLeft', 2, 7, tiles, 'mosaic gallery')).toBe(1);
  });

  it('keeps the column with Up and Down, landing on the last tile of a shorter row', () => {
    expect(moveTarget('ArrowDown', 3, 7, tiles, 'mosaic')).toBe(6);
    expect(moveTarget('ArrowUp', 6, 7, tiles, 'mosaic')).toBe(3);
    expect(moveTarget('ArrowDown', 4, 7, tiles, 'mosaic')).toBe(6);
    // Across the "Files" heading to the folders' row.
    expect(moveTarget('ArrowUp', 4, 7, tiles, 'mosaic')).toBe(1);
    expect(moveTarget('ArrowDown', 1, 7, tiles, 'mosaic')).toBe(3);
  });

  it('goes to the first and last entries with Home and End', () => {
    expect(moveTarget('Home', 4, 7, tiles, 'mosaic')).toBe(0);
    expect(moveTarget('End', 0, 5, list, 'list')).toBe(4);
  });

  it('moves only with the arrows, Home and End', () => {
    expect(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End'].every(isMoveKey)).toBe(true);
    expect(isMoveKey('Enter')).toBe(false);
    expect(moveTarget('PageDown', 0, 5, list, 'list')).toBeNull();
  });
});

describe('focusSelection', () => {
  const order = ['/a', '/b', '/c', '/d'];

  it('selects the focused entry alone and makes it the anchor', () => {
    const selection = focusSelection({ paths: new Set(['/a', '/c']), anchor: '/a' }, order, 1, false);
    expect([...selection.paths]).toEqual(['/b']);
    expect(selection.anchor).toBe('/b');
  });

  it('with Shift selects exactly the range from the anchor, both ways', () => {
    const start = focusSelection(EMPTY_SELECTION, order, 1, false);
    const down = focusSelection(start, order, 3, true);
    expect([...down.paths]).toEqual(['/b', '/c', '/d']);
    expect(down.anchor).toBe('/b');
    const up = focusSelection(down, order, 0, true);
    expect([...up.paths]).toEqual(['/a', '/b']);
  });

  it('with Shift and no anchor starts from the focused entry', () => {
    expect([...focusSelection(EMPTY_SELECTION, order, 2, true).paths]).toEqual(['/c']);
  });
});

describe('rowOf', () => {
  it('finds the virtual row of an entry, past the section headings', () => {
    const tiles = buildRows(2, 5, 'mosaic', 3);
    expect(rowOf(tiles, 0)).toBe(1);
    expect(rowOf(tiles, 2)).toBe(3);
    expect(rowOf(tiles, 6)).toBe(4);
  });
});
