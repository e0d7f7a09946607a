import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { editorShown, renderEditor, textFile, typeAtEnd } from '../../../test/render-editor';
import { press, pressedViews } from '../../../test/view-switch';
import { cellTexts, columnHeaders, tableViewportEach } from '../../../test/table';

const csv = textFile('/data/people.csv', 'name,city\nAda,London\n');

describe('Editor with a CSV file', () => {
  tableViewportEach();

  it('opens as a table, switches to the editor and back, the table showing unsaved edits', async () => {
    const view = await renderEditor(csv, { download: true, modify: true });
    expect(pressedViews()).toEqual(['Table']);
    expect(columnHeaders()).toEqual(['name', 'city']);
    expect(editorShown(view)).toBe(false);

    press('Source');
    expect(pressedViews()).toEqual(['Source']);
    expect(screen.queryByRole('table')).toBeNull();
    expect(editorShown(view)).toBe(true);
    typeAtEnd(view, 'Bob,Paris\n');
    expect(screen.getByText('Unsaved changes')).toBeTruthy();

    press('Table');
    expect(editorShown(view)).toBe(false);
    expect(cellTexts()).toEqual(['Ada', 'London', 'Bob', 'Paris']);
    // The edit is still there to save: switching views never drops it.
    expect(screen.getByText('Unsaved changes')).toBeTruthy();
    expect(view.state.doc.toString()).toBe('name,city\nAda,London\nBob,Paris\n');
  });

  it('lets a reader without modify permission see the text too, read-only', async () => {
    const view = await renderEditor(csv, { download: true });
    expect(pressedViews()).toEqual(['Table']);
    press('Source');
    expect(editorShown(view)).toBe(true);
    expect(view.state.readOnly).toBe(true);
    expect(screen.getByText('Read-only')).toBeTruthy();
  });

  it('offers no view switch for other text files', async () => {
    await renderEditor(textFile('/notes.txt', 'a,b\n1,2\n'), { download: true, modify: true });
    expect(screen.queryByRole('group', { name: 'Show as' })).toBeNull();
    expect(screen.queryByRole('table')).toBeNull();
  });
});
