import { cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startup } from '../../../startup';
import { noPermissions } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { UserSettingsFields, type UserSettingsValue } from './UserSettingsFields';

const value: UserSettingsValue = {
  scope: '/bob',
  locale: 'en',
  viewMode: 'list',
  singleClick: false,
  hideDotfiles: false,
  dateFormat: false,
  redirectAfterCopyMove: true,
  perm: { ...noPermissions, execute: true },
  commands: ['ls', 'echo'],
  uploadsLimit: 5,
  sorting: { by: 'name', asc: false },
};

describe('UserSettingsFields: commands', () => {
  const enableExec = startup.EnableExec;
  afterEach(() => {
    cleanup();
    startup.EnableExec = enableExec;
  });

  it('edits the allow-list as space-separated names; empty text is an empty list', async () => {
    startup.EnableExec = true;
    const onChange = vi.fn();
    await renderWithApp(<UserSettingsFields value={value} onChange={onChange} />);
    const field = screen.getByRole<HTMLInputElement>('textbox', { name: 'Commands' });
    expect(field.value).toBe('ls echo');

    fireEvent.change(field, { target: { value: ' ls  du\tgrep ' } });
    expect(onChange).toHaveBeenLastCalledWith({ commands: ['ls', 'du', 'grep'] });
    expect(field.value).toBe(' ls  du\tgrep ');

    fireEvent.change(field, { target: { value: '' } });
    expect(onChange).toHaveBeenLastCalledWith({ commands: [] });
  });

  it('is not shown when exec is disabled', async () => {
    startup.EnableExec = false;
    await renderWithApp(<UserSettingsFields value={value} onChange={vi.fn()} />);
    expect(screen.queryByRole('textbox', { name: 'Commands' })).toBeNull();
  });
});

describe('UserSettingsFields: sorting', () => {
  afterEach(cleanup);

  it('shows the direction the listing really runs, undoing the inverted flag for names', async () => {
    const onChange = vi.fn();
    await renderWithApp(<UserSettingsFields value={value} onChange={onChange} />);
    const ascending = screen.getByRole<HTMLInputElement>('checkbox', { name: /^Ascending order/ });
    // asc=false on names means A→Z.
    expect(ascending.checked).toBe(true);
    fireEvent.click(ascending);
    expect(onChange).toHaveBeenLastCalledWith({ sorting: { by: 'name', asc: true } });

    fireEvent.change(screen.getByRole('combobox', { name: 'Sort by' }), { target: { value: 'modified' } });
    expect(onChange).toHaveBeenLastCalledWith({ sorting: { by: 'modified', asc: true } });
  });

  it('keeps the direction when the column changes from a size to a name', async () => {
    const onChange = vi.fn();
    const newestFirst = { ...value, sorting: { by: 'modified', asc: false } };
    await renderWithApp(<UserSettingsFields value={newestFirst} onChange={onChange} />);
    expect(screen.getByRole<HTMLInputElement>('checkbox', { name: /^Ascending order/ }).checked).toBe(false);
    fireEvent.change(screen.getByRole('combobox', { name: 'Sort by' }), { target: { value: 'name' } });
    expect(onChange).toHaveBeenLastCalledWith({ sorting: { by: 'name', asc: true } });
  });
});
