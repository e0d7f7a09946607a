import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startup } from '../startup';
import { fakeToken, tokenUser } from '../test/fixtures';
import { canLogout, useAuthStore } from './auth';

describe('auth store', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const replace = vi.fn();
  const originalLocation = window.location;

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    Object.defineProperty(window, 'location', {
      configurable: true,
      value: {
        ...originalLocation,
        pathname: '/files/docs/',
        search: '',
        protocol: 'http:',
        replace,
        reload: vi.fn(),
      },
    });
    useAuthStore.setState({ user: null, jwt: null, expiresAt: 0 });
    localStorage.clear();
  });

  afterEach(() => {
    Object.defineProperty(window, 'location', { configurable: true, value: originalLocation });
    vi.unstubAllGlobals();
    vi.useRealTimers();
    fetchMock.mockReset();
    replace.mockReset();
  });

  it('signs in: the user comes from the token, kept in storage and in the auth cookie', async () => {
    const jwt = fakeToken(tokenUser({ create: true }));
    fetchMock.mockResolvedValue(new Response(jwt));
    await useAuthStore.getState().login({ username: 'alice', password: 'pw' });

    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/login');
    expect(JSON.parse(init?.body as string)).toEqual({ username: 'alice', password: 'pw', recaptcha: '' });
    expect(useAuthStore.getState().user?.username).toBe('alice');
    expect(localStorage.getItem('jwt')).toBe(jwt);
    expect(document.cookie).toContain(`auth=${jwt}`);
  });

  it('signs out: clears the session, tells the server, and goes to the login screen', () => {
    const jwt = fakeToken(tokenUser());
    fetchMock.mockResolvedValue(new Response('200 OK\n'));
    useAuthStore.getState().setToken(jwt);
    useAuthStore.getState().logout('user');

    expect(useAuthStore.getState().user).toBeNull();
    expect(localStorage.getItem('jwt')).toBeNull();
    expect(document.cookie).not.toContain('auth=ey');
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/logout');
    expect(new Headers(init?.headers).get('X-Auth')).toBe(jwt);
    expect(replace).toHaveBeenCalledWith('/login');
  });

  it('an ended session returns to the page after signing in again', () => {
    useAuthStore.getState().setToken(fakeToken(tokenUser()));
    useAuthStore.getState().logout('expired');
    expect(replace).toHaveBeenCalledWith('/login?redirect=%2Ffiles%2Fdocs%2F');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('signs out when the token expires', () => {
    vi.useFakeTimers();
    useAuthStore.getState().setToken(fakeToken(tokenUser(), 60));
    vi.advanceTimersByTime(59_000);
    expect(useAuthStore.getState().user).not.toBeNull();
    vi.advanceTimersByTime(1_000);
    expect(useAuthStore.getState().user).toBeNull();
  });

  it('signs out on a 401 from any authenticated call', async () => {
    useAuthStore.getState().setToken(fakeToken(tokenUser()));
    fetchMock.mockResolvedValue(new Response('401 Unauthorized\n', { status: 401 }));
    const { listUsers } = await import('../api/users');
    await expect(listUsers()).rejects.toMatchObject({ status: 401 });
    expect(useAuthStore.getState().user).toBeNull();
  });

  it('renews when a response asks for it', async () => {
    const first = fakeToken(tokenUser());
    const renewed = fakeToken(tokenUser({}, { locale: 'de' }));
    useAuthStore.getState().setToken(first);
    fetchMock.mockImplementation(async (input) =>
      String(input) === '/api/renew'
        ? new Response(renewed)
        : new Response('[]', { headers: { 'X-Renew-Token': 'true' } }),
    );
    const { listUsers } = await import('../api/users');
    await listUsers();
    await vi.waitFor(() => expect(useAuthStore.getState().jwt).toBe(renewed));
    expect(useAuthStore.getState().user?.locale).toBe('de');
  });

  it('validates a stored session at start by renewing it', async () => {
    const stored = fakeToken(tokenUser());
    const fresh = fakeToken(tokenUser({ admin: true }));
    localStorage.setItem('jwt', stored);
    fetchMock.mockResolvedValue(new Response(fresh));
    await useAuthStore.getState().initialize();
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/renew');
    expect(new Headers(init?.headers).get('X-Auth')).toBe(stored);
    expect(useAuthStore.getState().user?.perm.admin).toBe(true);
  });

  it('forgets a stored session the server refuses, without leaving the page', async () => {
    localStorage.setItem('jwt', fakeToken(tokenUser()));
    fetchMock.mockResolvedValue(new Response('401 Unauthorized\n', { status: 401 }));
    await useAuthStore.getState().initialize();
    expect(useAuthStore.getState().user).toBeNull();
    expect(localStorage.getItem('jwt')).toBeNull();
    expect(replace).not.toHaveBeenCalled();
  });

  it('signs in without credentials when there is no login page (proxy, no-auth)', async () => {
    startup.LoginPage = false;
    try {
      fetchMock.mockResolvedValue(new Response(fakeToken(tokenUser())));
      await useAuthStore.getState().initialize();
      const [url, init] = fetchMock.mock.calls[0]!;
      expect(url).toBe('/api/login');
      expect(JSON.parse(init?.body as string)).toEqual({ username: '', password: '', recaptcha: '' });
      expect(useAuthStore.getState().user).not.toBeNull();
    } finally {
      startup.LoginPage = true;
    }
  });
});

describe('canLogout', () => {
  afterEach(() => {
    Object.assign(startup, { NoAuth: false, LoginPage: true, LogoutPage: '/login' });
  });

  it('offers logout with a login page', () => {
    expect(canLogout()).toBe(true);
  });

  it('hides it with no-auth, and with a proxy that has no logout page', () => {
    Object.assign(startup, { NoAuth: true, LoginPage: false });
    expect(canLogout()).toBe(false);
    Object.assign(startup, { NoAuth: false, LoginPage: false, LogoutPage: '/login' });
    expect(canLogout()).toBe(false);
    Object.assign(startup, { LogoutPage: 'https://sso.example/logout' });
    expect(canLogout()).toBe(true);
  });
});
