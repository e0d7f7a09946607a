import { cleanup, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startup } from '../../startup';
import { useAuthStore } from '../../stores/auth';
import { useFilesStore } from '../../stores/files';
import { fakeToken, tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { Sidebar } from './Sidebar';

const signIn = (perm: Parameters<typeof tokenUser>[0]) => {
  const user = tokenUser(perm);
  useAuthStore.setState({ user, jwt: fakeToken(user) });
};

describe('Sidebar', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const saved = { ...startup };
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useFilesStore.setState({ currentFolder: null });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
    Object.assign(startup, saved);
    useAuthStore.setState({ user: null, jwt: null });
  });

  const link = (name: string) => screen.queryByRole('link', { name });
  const button = (name: string) => screen.queryByRole('button', { name });

  it('offers files, trash, settings, logout and help to a signed-in user; new entries need create', async () => {
    signIn({ create: false });
    await renderWithApp(<Sidebar />, { route: '/settings/profile' });
    expect(link('My files')?.getAttribute('href')).toBe('/files/');
    expect(link('Trash')?.getAttribute('href')).toBe('/trash');
    expect(link('Settings')?.getAttribute('href')).toBe('/settings');
    expect(button('Logout')).toBeTruthy();
    expect(button('Help')).toBeTruthy();
    expect(button('New folder')).toBeNull();
    expect(button('New file')).toBeNull();
    cleanup();

    signIn({ create: true });
    await renderWithApp(<Sidebar />, { route: '/settings/profile' });
    expect(button('New folder')).toBeTruthy();
    expect(button('New file')).toBeTruthy();
  });

  it('hides logout with no-auth, and with proxy auth that has no logout page', async () => {
    signIn({});
    Object.assign(startup, { NoAuth: true, LoginPage: false, AuthMethod: 'noauth' });
    await renderWithApp(<Sidebar />);
    expect(button('Logout')).toBeNull();
    cleanup();

    Object.assign(startup, { NoAuth: false, LoginPage: false, AuthMethod: 'proxy', LogoutPage: '/login' });
    await renderWithApp(<Sidebar />);
    expect(button('Logout')).toBeNull();
    cleanup();

    Object.assign(startup, { LogoutPage: 'https://sso.example/logout' });
    await renderWithApp(<Sidebar />);
    expect(button('Logout')).toBeTruthy();
  });

  it('offers login, and signup only when allowed, to visitors', async () => {
    await renderWithApp(<Sidebar />);
    expect(link('Login')?.getAttribute('href')).toBe('/login');
    expect(link('Signup')).toBeNull();
    expect(link('Settings')).toBeNull();
    cleanup();

    startup.Signup = true;
    await renderWithApp(<Sidebar />);
    expect(link('Signup')?.getAttribute('href')).toBe('/login');
  });

  it('shows the usage of the folder on file pages once the server answers, and nothing otherwise', async () => {
    signIn({});
    useFilesStore.setState({ currentFolder: '/photos/' });
    let answer: (r: Response) => void = () => undefined;
    fetchMock.mockReturnValue(new Promise<Response>((resolve) => (answer = resolve)));
    await renderWithApp(<Sidebar />, { route: '/files/photos/' });
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(fetchMock.mock.calls[0]![0]).toBe('/api/usage/photos/');
    answer(Response.json({ total: 4 * 1024 ** 3, used: 1024 ** 3 }));
    const bar = await screen.findByRole('progressbar', { name: 'Disk usage' });
    expect(bar.getAttribute('value')).toBe(String(1024 ** 3));
    expect(screen.getByText('1 GiB of 4 GiB used')).toBeTruthy();
    cleanup();

    // Until the files API answers (or when it fails), there is no bar.
    fetchMock.mockResolvedValue(new Response('404 Not Found\n', { status: 404 }));
    await renderWithApp(<Sidebar />, { route: '/files/photos/' });
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(2));
    expect(screen.queryByRole('progressbar')).toBeNull();
    cleanup();

    // Not on other pages, and not when the branding hides it.
    await renderWithApp(<Sidebar />, { route: '/settings/profile' });
    startup.DisableUsedPercentage = true;
    await renderWithApp(<Sidebar />, { route: '/files/photos/' });
    expect(fetchMock).toHaveBeenCalledTimes(2);
  });

  it('shows used of quota when the server says a quota applies', async () => {
    signIn({});
    useFilesStore.setState({ currentFolder: '/' });
    fetchMock.mockResolvedValue(
      Response.json({ total: 10 * 1024 ** 2, used: 3 * 1024 ** 2, quota: 10 * 1024 ** 2 }),
    );
    await renderWithApp(<Sidebar />, { route: '/files/' });
    const bar = await screen.findByRole('progressbar', { name: 'Quota' });
    expect(bar.getAttribute('max')).toBe(String(10 * 1024 ** 2));
    expect(screen.getByText('3 MiB of 10 MiB quota used')).toBeTruthy();
  });
});
