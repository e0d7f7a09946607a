import type { User, UserDefaults } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PromptHost } from '../../../components/prompts/PromptHost';
import { useAuthStore } from '../../../stores/auth';
import { useLayoutStore } from '../../../stores/layout';
import { useToastStore } from '../../../stores/toasts';
import { fakeToken, noPermissions, tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { newUserFrom } from './new-user';
import { UserForm } from './UserForm';

const defaults: UserDefaults = {
  scope: '/shared',
  locale: 'en',
  viewMode: 'list',
  singleClick: false,
  redirectAfterCopyMove: true,
  sorting: { by: 'name', asc: false },
  perm: { ...noPermissions, create: true, download: true },
  commands: [],
  hideDotfiles: false,
  dateFormat: false,
  aceEditorTheme: '',
  uploadsLimit: 3,
};

const bob: User = { ...newUserFrom(defaults), id: 5, username: 'bob', scope: '/bob' };

const PERMISSION_LABELS = [
  'Create files and directories',
  'Rename or move files and directories',
  'Edit files',
  'Delete files and directories',
  'Share files',
  'Download',
  'Execute commands',
];

const checkbox = (label: string) => screen.getByLabelText<HTMLInputElement>(label);
const field = (label: string) => screen.getByLabelText<HTMLInputElement>(label, { exact: true });

async function renderForm(props: { initial: User; isNew: boolean; offerHomeDir: boolean }) {
  const route = props.isNew ? '/settings/users/new' : `/settings/users/${props.initial.id}`;
  return renderWithApp(
    <>
      <Routes>
        <Route path="/settings/users/:id" element={<UserForm {...props} />} />
        <Route path="/settings/users" element={<p>the user list</p>} />
      </Routes>
      <PromptHost />
    </>,
    { route },
  );
}

describe('UserForm', () => {
  const fetchMock = vi.fn<typeof fetch>();
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    const admin = tokenUser({ admin: true }, { id: 1, username: 'admin' });
    useAuthStore.setState({ user: admin, jwt: fakeToken(admin) });
    useLayoutStore.setState({ prompts: [] });
    useToastStore.setState({ toasts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('ticks and locks every permission when admin is ticked, and frees them when unticked', async () => {
    await renderForm({ initial: newUserFrom(defaults), isNew: true, offerHomeDir: false });
    expect(checkbox('Edit files').checked).toBe(false);
    expect(checkbox('Edit files').disabled).toBe(false);

    fireEvent.click(checkbox('Administrator'));
    for (const label of PERMISSION_LABELS) {
      expect(checkbox(label).checked, label).toBe(true);
      expect(checkbox(label).disabled, label).toBe(true);
    }
    // Admins can always change their password.
    expect(checkbox('Prevent the user from changing the password').disabled).toBe(true);
    expect(checkbox('Prevent the user from changing the password').checked).toBe(false);

    fireEvent.click(checkbox('Administrator'));
    for (const label of PERMISSION_LABELS) expect(checkbox(label).disabled, label).toBe(false);
    fireEvent.click(checkbox('Edit files'));
    expect(checkbox('Edit files').checked).toBe(false);
  });

  it('clears and disables the scope for an automatic home folder, and restores it when unticked', async () => {
    await renderForm({ initial: newUserFrom(defaults), isNew: true, offerHomeDir: true });
    const home = checkbox('Create user home directory');
    expect(home.checked).toBe(true);
    expect(field('Scope').disabled).toBe(true);
    expect(field('Scope').value).toBe('');

    fireEvent.click(home);
    expect(field('Scope').disabled).toBe(false);
    expect(field('Scope').value).toBe('/shared');

    fireEvent.change(field('Scope'), { target: { value: '/projects' } });
    fireEvent.click(home);
    expect(field('Scope').value).toBe('');
    expect(field('Scope').disabled).toBe(true);
    fireEvent.click(home);
    expect(field('Scope').value).toBe('/projects');
  });

  it('creates the user with an empty scope when the home folder is automatic, then opens it', async () => {
    fetchMock.mockResolvedValue(
      new Response('201 Created\n', { status: 201, headers: { Location: '/settings/users/9' } }),
    );
    await renderForm({ initial: newUserFrom(defaults), isNew: true, offerHomeDir: true });
    expect(screen.queryByText('Leave blank to avoid changes')).toBeNull();
    fireEvent.change(field('Username'), { target: { value: 'carol' } });
    fireEvent.change(field('Password'), { target: { value: 'carols-long-password' } });
    fireEvent.change(field('Your current password'), { target: { value: 'admin-password' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    });
    expect(fetchMock).toHaveBeenCalledTimes(1);
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/users');
    expect(init?.method).toBe('POST');
    const body = JSON.parse(init?.body as string) as {
      which: string[];
      current_password: string;
      data: User;
    };
    expect(body.which).toEqual([]);
    expect(body.current_password).toBe('admin-password');
    expect(body.data).toMatchObject({ username: 'carol', password: 'carols-long-password', scope: '' });
    expect(useToastStore.getState().toasts.map((t) => t.message)).toEqual(['User created!']);
  });

  it("saves a user's redirect after copy or move and sorting with the rest of the user", async () => {
    fetchMock.mockResolvedValue(new Response('200 OK\n'));
    await renderForm({ initial: bob, isNew: false, offerHomeDir: false });
    const redirect = checkbox('Go to the destination after copying or moving');
    expect(redirect.checked).toBe(true);
    fireEvent.click(redirect);
    fireEvent.change(field('Sort by'), { target: { value: 'size' } });
    fireEvent.change(field('Your current password'), { target: { value: 'admin-password' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    });
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(1));
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/users/5');
    const body = JSON.parse(init?.body as string) as { which: string[]; data: User };
    expect(body.which).toEqual(['all']);
    expect(body.data).toMatchObject({ redirectAfterCopyMove: false, sorting: { by: 'size', asc: true } });
  });

  it('saves the WebDAV flag of a user', async () => {
    fetchMock.mockResolvedValue(new Response('200 OK\n'));
    await renderForm({ initial: bob, isNew: false, offerHomeDir: false });
    const webdav = checkbox('May use WebDAV (when WebDAV is set per user)');
    expect(webdav.checked).toBe(false);
    fireEvent.click(webdav);
    fireEvent.change(field('Your current password'), { target: { value: 'admin-password' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    });
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(1));
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/users/5');
    expect((JSON.parse(init?.body as string) as { data: User }).data.webdav).toBe(true);
  });

  it('sets the quota of a user in bytes, showing the size in words', async () => {
    fetchMock.mockResolvedValue(new Response('200 OK\n'));
    await renderForm({ initial: bob, isNew: false, offerHomeDir: false });
    const quota = field('Storage quota (bytes)');
    expect(quota.value).toBe('0');
    fireEvent.change(quota, { target: { value: '10485760' } });
    expect(screen.getByText(/^10 MiB\. 0 means no quota/)).toBeTruthy();
    fireEvent.change(field('Your current password'), { target: { value: 'admin-password' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    });
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(1));
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/users/5');
    expect((JSON.parse(init?.body as string) as { data: User }).data.quota).toBe(10485760);
  });

  it('tells an admin editing a user that a blank password changes nothing', async () => {
    await renderForm({ initial: bob, isNew: false, offerHomeDir: false });
    const password = field('Password');
    expect(password.value).toBe('');
    expect(password.required).toBe(false);
    const hint = document.getElementById(password.getAttribute('aria-describedby') ?? '');
    expect(hint?.textContent).toBe('Leave blank to avoid changes');
    expect(screen.queryByLabelText('Create user home directory')).toBeNull();
  });

  it('deletes only after confirmation, then returns to the user list', async () => {
    await renderForm({ initial: bob, isNew: false, offerHomeDir: false });
    fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    let dialog = screen.getByRole('dialog', { name: 'Delete user' });
    expect(within(dialog).getByText('Are you sure you want to delete the user bob?')).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(fetchMock).not.toHaveBeenCalled();

    fetchMock.mockResolvedValue(new Response('200 OK\n'));
    fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    dialog = screen.getByRole('dialog', { name: 'Delete user' });
    fireEvent.change(within(dialog).getByLabelText('Your current password'), {
      target: { value: 'admin-password' },
    });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    });
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/users/5');
    expect(init?.method).toBe('DELETE');
    expect(JSON.parse(init?.body as string)).toEqual({ current_password: 'admin-password' });
    expect(screen.getByText('the user list')).toBeTruthy();
    expect(useToastStore.getState().toasts.map((t) => t.message)).toEqual(['User deleted!']);
  });

  it("shows 'forbidden' when the server refuses the deletion", async () => {
    fetchMock.mockResolvedValue(
      new Response('403 Forbidden (the last administrator cannot be deleted)\n', { status: 403 }),
    );
    await renderForm({ initial: bob, isNew: false, offerHomeDir: false });
    fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete user' });
    fireEvent.change(within(dialog).getByLabelText('Your current password'), { target: { value: 'pw' } });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    });
    expect(useToastStore.getState().toasts.map((t) => [t.kind, t.message])).toEqual([
      ['error', "You don't have permissions to access this."],
    ]);
    expect(screen.queryByText('the user list')).toBeNull();
  });
});
