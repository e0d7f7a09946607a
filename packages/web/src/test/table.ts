import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, beforeEach } from 'vitest';
import { withViewport } from './viewport';

/**
 * For the tests of a `describe` showing the virtual table: each gets a viewport to lay rows out
 * in, and its render is cleaned up before the viewport goes.
 */
export function tableViewportEach(): void {
  let restoreViewport: () => void;
  beforeEach(() => {
    restoreViewport = withViewport();
  });
  afterEach(() => {
    cleanup();
    restoreViewport();
  });
}

export const table = () => screen.getByRole('table');

/** The texts of the table's column headers (none when it has no header row). */
export const columnHeaders = () =>
  within(table())
    .queryAllByRole('columnheader')
    .map((cell) => cell.textContent);

/** The texts of the cells in `of` (a row; the whole table by default), row by row. */
export const cellTexts = (of: HTMLElement = table()) =>
  within(of)
    .getAllByRole('cell')
    .map((cell) => cell.textContent);
