import { act, fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderWithApp } from '../../../test/render';
import { cellTexts, columnHeaders, table, tableViewportEach } from '../../../test/table';
import { CsvTable } from './CsvTable';

const PEOPLE = 'name;city;note\nAda;London;"says ""hi""; twice"\nBob;Paris;"two\nlines"\n';

const bodyRows = () =>
  within(table())
    .getAllByRole('row')
    .filter((row) => row.hasAttribute('aria-rowindex') && row.closest('tbody'));

describe('CsvTable', () => {
  tableViewportEach();

  it('shows the first row as the header and the rest as rows, split on the detected separator', async () => {
    await renderWithApp(<CsvTable text={PEOPLE} name="people.csv" />);
    expect(columnHeaders()).toEqual(['name', 'city', 'note']);
    expect(bodyRows().map(cellTexts)).toEqual([
      ['Ada', 'London', 'says "hi"; twice'],
      ['Bob', 'Paris', 'two\nlines'],
    ]);
    expect((screen.getByRole('combobox', { name: 'Separator' }) as HTMLSelectElement).value).toBe(';');
    expect(screen.getByRole('status').textContent).toBe('2 rows');
    expect(table().getAttribute('aria-rowcount')).toBe('3');
  });

  it('reads the first row as data when the header box is unticked', async () => {
    await renderWithApp(<CsvTable text={PEOPLE} name="people.csv" />);
    act(() => {
      fireEvent.click(screen.getByRole('checkbox', { name: 'First row is a header' }));
    });
    expect(columnHeaders()).toEqual([]);
    expect(bodyRows().map((row) => cellTexts(row)[0])).toEqual(['name', 'Ada', 'Bob']);
    expect(screen.getByRole('status').textContent).toBe('3 rows');
  });

  it('splits again on a separator chosen by hand', async () => {
    await renderWithApp(<CsvTable text={PEOPLE} name="people.csv" />);
    act(() => {
      fireEvent.change(screen.getByRole('combobox', { name: 'Separator' }), { target: { value: ',' } });
    });
    expect(columnHeaders()).toEqual(['name;city;note']);
  });

  it('reads a .tsv file on tabs and pads short rows', async () => {
    await renderWithApp(<CsvTable text={'a\tb\tc\n1\t2\n'} name="data.tsv" />);
    expect(columnHeaders()).toEqual(['a', 'b', 'c']);
    expect(bodyRows().map(cellTexts)).toEqual([['1', '2', '']]);
  });

  it('puts only the rows in view into the page for a big file', async () => {
    const lines = ['id,value', ...Array.from({ length: 20_000 }, (_, index) => `${index},v${index}`)];
    await renderWithApp(<CsvTable text={lines.join('\n')} name="big.csv" />);
    expect(screen.getByRole('status').textContent).toBe('20000 rows');
    expect(table().getAttribute('aria-rowcount')).toBe('20001');
    const rendered = bodyRows();
    expect(rendered.length).toBeGreaterThan(5);
    expect(rendered.length).toBeLessThan(60);
    expect(cellTexts(rendered[0]!)).toEqual(['0', 'v0']);
  });

  it('says so when the file has no rows', async () => {
    await renderWithApp(<CsvTable text={'\n\n'} name="empty.csv" />);
    expect(screen.queryByRole('table')).toBeNull();
    expect(screen.getByText('This file has no rows.')).toBeTruthy();
  });
});
