import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../../stores/auth';
import { useToastStore } from '../../../stores/toasts';
import { fakeToken, tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { ProfileSettings } from './ProfileSettings';

describe('ProfileSettings', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const alice = tokenUser({ download: true }, { uploadsLimit: 3 });

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: alice, jwt: fakeToken(alice) });
    useToastStore.setState({ toasts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  const field = (label: string) => screen.getByLabelText<HTMLInputElement>(label, { exact: true });

  it('saves the profile fields, keeps the uploads limit between 1 and 10, and renews the session', async () => {
    const renewed = tokenUser({ download: true }, { locale: 'fr', hideDotfiles: true, uploadsLimit: 10 });
    fetchMock.mockImplementation(async (url) =>
      url === '/api/renew'
        ? new Response(fakeToken(renewed))
        : url === '/api/tokens'
          ? new Response('[]', { headers: { 'Content-Type': 'application/json' } })
          : new Response('200 OK\n'),
    );
    await renderWithApp(<ProfileSettings />);
    // The API tokens card loads its list on its own (see ApiTokens.test.tsx).
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledWith('/api/tokens', expect.anything()));
    fetchMock.mockClear();
    expect(document.title).toBe('Profile settings - File Browser');
    fireEvent.click(field('Hide dotfiles'));
    fireEvent.click(field('Go to the destination after copying or moving'));
    const limit = field('Concurrent uploads limit');
    expect(limit.value).toBe('3');
    fireEvent.change(limit, { target: { value: '42' } });
    fireEvent.blur(limit);
    expect(limit.value).toBe('10');
    fireEvent.change(field('Language'), { target: { value: 'fr' } });

    await act(async () => {
      fireEvent.click(screen.getAllByRole('button', { name: 'Update' })[0]!);
    });
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(2));
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe(`/api/users/${alice.id}`);
    expect(JSON.parse(init?.body as string)).toEqual({
      what: 'user',
      which: ['locale', 'hideDotfiles', 'singleClick', 'redirectAfterCopyMove', 'dateFormat', 'uploadsLimit'],
      data: {
        id: alice.id,
        locale: 'fr',
        hideDotfiles: true,
        singleClick: false,
        redirectAfterCopyMove: true,
        dateFormat: false,
        uploadsLimit: 10,
      },
    });
    // The fresh token carries the new settings, and with them the language.
    expect(fetchMock.mock.calls[1]![0]).toBe('/api/renew');
    expect(useAuthStore.getState().user?.locale).toBe('fr');
    expect(useToastStore.getState().toasts.map((t) => t.message)).toEqual(['Settings updated!']);
  });

  it('raises an uploads limit under 1 to 1', async () => {
    await renderWithApp(<ProfileSettings />);
    const limit = field('Concurrent uploads limit');
    fireEvent.change(limit, { target: { value: '0' } });
    fireEvent.blur(limit);
    expect(limit.value).toBe('1');
  });

  it('offers the password change unless the password is locked', async () => {
    await renderWithApp(<ProfileSettings />);
    expect(screen.getByRole('heading', { name: 'Change password' })).toBeTruthy();
    cleanup();
    const locked = tokenUser({}, { lockPassword: true });
    useAuthStore.setState({ user: locked, jwt: fakeToken(locked) });
    await renderWithApp(<ProfileSettings />);
    expect(screen.getByRole('heading', { name: 'Profile settings' })).toBeTruthy();
    expect(screen.queryByRole('heading', { name: 'Change password' })).toBeNull();
  });
});
