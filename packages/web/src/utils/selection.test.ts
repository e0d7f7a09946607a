import { describe, expect, it } from 'vitest';
import {
  clickSelection,
  EMPTY_SELECTION,
  isDoubleClick,
  pruneSelection,
  selectAll,
  selectedInOrder,
  type Selection,
} from './selection';

const order = ['/a/', '/b/', '/c.txt', '/d.txt', '/e.txt', '/f.txt'];
const plain = { toggle: false, range: false };
const toggle = { toggle: true, range: false };
const shift = { toggle: false, range: true };
const paths = (selection: Selection) => [...selection.paths].sort();

describe('clickSelection', () => {
  it('selects only the clicked entry on a plain click and makes it the anchor', () => {
    let selection = clickSelection(EMPTY_SELECTION, order, 2, plain);
    expect(paths(selection)).toEqual(['/c.txt']);
    expect(selection.anchor).toBe('/c.txt');
    selection = clickSelection(selection, order, 4, plain);
    expect(paths(selection)).toEqual(['/e.txt']);
  });

  it('narrows a multiple selection to the clicked entry on a plain click', () => {
    const selection = clickSelection(selectAll(order), order, 1, plain);
    expect(paths(selection)).toEqual(['/b/']);
  });

  it('adds and removes single entries on a toggle click (Ctrl, Meta or select-multiple mode)', () => {
    let selection = clickSelection(EMPTY_SELECTION, order, 0, toggle);
    selection = clickSelection(selection, order, 3, toggle);
    expect(paths(selection)).toEqual(['/a/', '/d.txt']);
    selection = clickSelection(selection, order, 0, toggle);
    expect(paths(selection)).toEqual(['/d.txt']);
    expect(selection.anchor).toBe('/a/');
  });

  it('adds the range from the anchor downwards on a Shift click', () => {
    const start = clickSelection(EMPTY_SELECTION, order, 1, plain);
    const selection = clickSelection(start, order, 4, shift);
    expect(paths(selection)).toEqual(['/b/', '/c.txt', '/d.txt', '/e.txt']);
    expect(selection.anchor).toBe('/b/');
  });

  it('adds the range from the anchor upwards on a Shift click', () => {
    const start = clickSelection(EMPTY_SELECTION, order, 4, plain);
    const selection = clickSelection(start, order, 2, shift);
    expect(paths(selection)).toEqual(['/c.txt', '/d.txt', '/e.txt']);
  });

  it('keeps what was selected before when adding a Shift range', () => {
    let selection = clickSelection(EMPTY_SELECTION, order, 0, plain);
    selection = clickSelection(selection, order, 3, toggle);
    selection = clickSelection(selection, order, 5, shift);
    expect(paths(selection)).toEqual(['/a/', '/d.txt', '/e.txt', '/f.txt']);
  });

  it('moves the range end with successive Shift clicks from the same anchor (union)', () => {
    let selection = clickSelection(EMPTY_SELECTION, order, 2, plain);
    selection = clickSelection(selection, order, 4, shift);
    selection = clickSelection(selection, order, 0, shift);
    expect(paths(selection)).toEqual(['/a/', '/b/', '/c.txt', '/d.txt', '/e.txt']);
  });

  it('treats a Shift click without an anchor as a toggle', () => {
    const selection = clickSelection(EMPTY_SELECTION, order, 3, shift);
    expect(paths(selection)).toEqual(['/d.txt']);
    expect(selection.anchor).toBe('/d.txt');
  });

  it('ignores an anchor that is no longer listed', () => {
    const stale: Selection = { paths: new Set(['/gone']), anchor: '/gone' };
    const selection = clickSelection(stale, order, 1, shift);
    expect(paths(selection)).toEqual(['/b/', '/gone']);
  });

  it('leaves the selection alone for an index outside the list', () => {
    const selection = clickSelection(EMPTY_SELECTION, order, 99, plain);
    expect(selection).toBe(EMPTY_SELECTION);
  });
});

describe('selectAll, pruneSelection, selectedInOrder', () => {
  it('selects every entry', () => {
    expect(paths(selectAll(order))).toEqual([...order].sort());
  });

  it('drops entries that disappeared and keeps the object when nothing changed', () => {
    const selection: Selection = { paths: new Set(['/a/', '/x']), anchor: '/x' };
    const pruned = pruneSelection(selection, order);
    expect(paths(pruned)).toEqual(['/a/']);
    expect(pruned.anchor).toBeNull();
    const kept = pruneSelection(pruned, order);
    expect(kept).toBe(pruned);
  });

  it('returns the selected items in display order', () => {
    const items = order.map((path) => ({ path }));
    const selection: Selection = { paths: new Set(['/e.txt', '/a/']), anchor: null };
    expect(selectedInOrder(items, selection).map((item) => item.path)).toEqual(['/a/', '/e.txt']);
  });
});

describe('isDoubleClick', () => {
  it('is a double click on the same entry within 300 ms', () => {
    expect(isDoubleClick({ path: '/a', time: 1000 }, '/a', 1300)).toBe(true);
    expect(isDoubleClick({ path: '/a', time: 1000 }, '/a', 1001)).toBe(true);
  });

  it('is not one after 300 ms, on another entry, or without a first click', () => {
    expect(isDoubleClick({ path: '/a', time: 1000 }, '/a', 1301)).toBe(false);
    expect(isDoubleClick({ path: '/a', time: 1000 }, '/b', 1100)).toBe(false);
    expect(isDoubleClick(null, '/a', 1100)).toBe(false);
  });
});
