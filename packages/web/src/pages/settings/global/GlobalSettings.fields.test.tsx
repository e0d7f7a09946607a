import type { Settings } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../../stores/auth';
import { useToastStore } from '../../../stores/toasts';
import { fakeToken, settingsFixture, tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { GlobalSettings } from './GlobalSettings';

/** The settings the old client's screens lacked or that only the command line could see. */
describe('GlobalSettings: every field the settings API holds', () => {
  const fetchMock = vi.fn<typeof fetch>();
  let stored: Settings;
  let puts: Settings[];

  beforeEach(() => {
    stored = settingsFixture({ hideLoginButton: false, minimumPasswordLength: 12 });
    puts = [];
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockImplementation(async (_url, init) => {
      if (init?.method === 'PUT') {
        puts.push(JSON.parse(init.body as string) as Settings);
        return new Response('200 OK\n');
      }
      return Response.json(stored);
    });
    const admin = tokenUser({ admin: true }, { id: 1, username: 'admin' });
    useAuthStore.setState({ user: admin, jwt: fakeToken(admin) });
    useToastStore.setState({ toasts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  const field = (label: string) => screen.getByLabelText<HTMLInputElement>(label, { exact: true });
  const clickSave = () =>
    act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    });
  const ready = async () => {
    await renderWithApp(<GlobalSettings />);
    await screen.findByRole('heading', { name: 'Global settings' });
  };

  it('saves the login button, the minimum password length and the theme colour', async () => {
    await ready();
    fireEvent.click(field('Hide the login button on public pages'));
    fireEvent.change(field('Minimum password length'), { target: { value: '16' } });
    fireEvent.change(field('Brand colour'), { target: { value: ' #00aa77 ' } });
    await clickSave();
    await vi.waitFor(() => expect(puts).toHaveLength(1));
    expect(puts[0]).toMatchObject({
      hideLoginButton: true,
      minimumPasswordLength: 16,
      branding: { color: '#00aa77' },
    });
  });

  it('keeps the minimum password length between 1 and 72, and shows 12 for a stored 0', async () => {
    stored = settingsFixture({ minimumPasswordLength: 0 });
    await ready();
    const length = field('Minimum password length');
    expect(length.value).toBe('12');
    fireEvent.change(length, { target: { value: '500' } });
    fireEvent.blur(length);
    expect(length.value).toBe('72');
    fireEvent.change(length, { target: { value: '0' } });
    fireEvent.blur(length);
    expect(length.value).toBe('1');
    await clickSave();
    await vi.waitFor(() => expect(puts).toHaveLength(1));
    expect(puts[0]?.minimumPasswordLength).toBe(1);
  });

  it('refuses a colour that is neither hex nor a name, marks the field and sends nothing', async () => {
    await ready();
    const color = field('Brand colour');
    fireEvent.change(color, { target: { value: 'red;}body{x:y' } });
    expect(color.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText('Enter a hex colour such as #2979ff or a colour name.')).toBeTruthy();
    await clickSave();
    expect(useToastStore.getState().toasts).toMatchObject([
      { kind: 'error', message: 'Enter a hex colour such as #2979ff or a colour name.' },
    ]);
    expect(puts).toEqual([]);

    fireEvent.change(color, { target: { value: 'teal' } });
    expect(color.getAttribute('aria-invalid')).toBe('false');
    await clickSave();
    await vi.waitFor(() => expect(puts).toHaveLength(1));
    expect(puts[0]?.branding.color).toBe('teal');
  });

  it('keeps a colour an old database brought along while it is left alone', async () => {
    stored = settingsFixture({ branding: { ...settingsFixture().branding, color: 'rgb(1, 2, 3)' } });
    await ready();
    expect(field('Brand colour').getAttribute('aria-invalid')).toBe('false');
    await clickSave();
    await vi.waitFor(() => expect(puts).toHaveLength(1));
    expect(puts[0]?.branding.color).toBe('rgb(1, 2, 3)');
  });

  it('shows the authentication method, which only the command line changes', async () => {
    stored = settingsFixture({ authMethod: 'proxy' });
    await ready();
    const method = field('Authentication method');
    expect(method.value).toBe('Header from a proxy');
    expect(method.readOnly).toBe(true);
  });

  it('offers the default sorting of new users', async () => {
    await ready();
    fireEvent.change(field('Sort by'), { target: { value: 'size' } });
    await clickSave();
    await vi.waitFor(() => expect(puts).toHaveLength(1));
    // The fixture sorts names A→Z (asc=false, inverted for names): sizes keep the direction.
    expect(puts[0]?.defaults.sorting).toEqual({ by: 'size', asc: true });
  });
});
