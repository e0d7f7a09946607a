import type { User } from '@filebrowser/contract';
import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { noPermissions } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { newUserFrom } from './new-user';
import { UsersList } from './UsersList';

const base = newUserFrom({
  scope: '/',
  locale: 'en',
  viewMode: 'list',
  singleClick: false,
  redirectAfterCopyMove: false,
  sorting: { by: 'name', asc: false },
  perm: noPermissions,
  commands: [],
  hideDotfiles: false,
  dateFormat: false,
  aceEditorTheme: '',
});
const users: User[] = [
  { ...base, id: 1, username: 'admin', scope: '/', perm: { ...noPermissions, admin: true } },
  { ...base, id: 4, username: 'bob', scope: '/users/bob' },
];

describe('UsersList', () => {
  const fetchMock = vi.fn<typeof fetch>();
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockResolvedValue(Response.json(users));
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('lists username, admin flag and scope with an edit link, and offers a new user', async () => {
    await renderWithApp(<UsersList />);
    const rows = await screen.findAllByRole('row');
    expect(rows).toHaveLength(3);
    const cells = (row: HTMLElement) =>
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent);
    expect(cells(rows[1]!)).toEqual(['admin', 'doneYes', '/', 'mode_edit']);
    expect(cells(rows[2]!)).toEqual(['bob', 'closeNo', '/users/bob', 'mode_edit']);
    expect(screen.getByRole('link', { name: 'Edit bob' }).getAttribute('href')).toBe('/settings/users/4');
    expect(screen.getByRole('link', { name: /New/ }).getAttribute('href')).toBe('/settings/users/new');
    expect(document.title).toBe('User management - File Browser');
  });

  it('shows the error screen when the list cannot be loaded', async () => {
    fetchMock.mockResolvedValue(new Response('403 Forbidden\n', { status: 403 }));
    await renderWithApp(<UsersList />);
    expect(await screen.findByText("You don't have permissions to access this.")).toBeTruthy();
  });
});
