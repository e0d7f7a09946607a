import type { Settings } from '@filebrowser/contract';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startup } from '../../../startup';
import { useAuthStore } from '../../../stores/auth';
import { settingsFixture, tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { GlobalSettings } from './GlobalSettings';

const settings: Settings = settingsFixture({
  defaults: settingsFixture().defaults,
  commands: { before_save: [], after_save: ['echo saved'] },
  unsafeCommands: ['find'],
});

describe('GlobalSettings: the command runner', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const enableExec = startup.EnableExec;

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'PUT' ? new Response('200 OK') : new Response(JSON.stringify(settings)),
    );
    useAuthStore.setState({ user: tokenUser({ admin: true }), jwt: 'a.b.c' });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
    startup.EnableExec = enableExec;
  });

  it('shows hooks, shell and unsafe commands with their warning when exec is enabled, and saves them', async () => {
    startup.EnableExec = true;
    await renderWithApp(<GlobalSettings />);
    expect(await screen.findByRole('heading', { name: 'Command runner' })).toBeTruthy();
    expect(screen.getByLabelText<HTMLTextAreaElement>('After save').value).toBe('echo saved');
    expect(screen.getByLabelText('Execute on shell')).toBeTruthy();
    expect(screen.getByText(/^Danger: these commands can run any other command/)).toBeTruthy();

    const unsafe = screen.getByRole('textbox', { name: 'Unsafe commands' }) as HTMLTextAreaElement;
    expect(unsafe.value).toBe('find');
    expect(unsafe.getAttribute('aria-describedby')).toBeTruthy();
    fireEvent.change(unsafe, { target: { value: 'find\n env \n\n' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));

    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PUT')).toBe(true));
    const put = fetchMock.mock.calls.find(([, init]) => init?.method === 'PUT')!;
    const body = JSON.parse(String(put[1]?.body)) as Settings;
    expect(body.unsafeCommands).toEqual(['find', 'env']);
    expect(body.commands.after_save).toEqual(['echo saved']);
  });

  it('hides every command-runner field when exec is disabled', async () => {
    startup.EnableExec = false;
    await renderWithApp(<GlobalSettings />);
    expect(await screen.findByRole('heading', { name: 'Global settings' })).toBeTruthy();
    expect(screen.queryByRole('heading', { name: 'Command runner' })).toBeNull();
    expect(screen.queryByLabelText('Execute on shell')).toBeNull();
    expect(screen.queryByRole('textbox', { name: 'Unsafe commands' })).toBeNull();
    expect(screen.queryByRole('textbox', { name: 'Commands' })).toBeNull();
  });
});

describe('GlobalSettings: WebDAV', () => {
  const fetchMock = vi.fn<typeof fetch>();

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'PUT' ? new Response('200 OK') : new Response(JSON.stringify(settings)),
    );
    useAuthStore.setState({ user: tokenUser({ admin: true }), jwt: 'a.b.c' });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('shows WebDAV as on and saves it set per user', async () => {
    await renderWithApp(<GlobalSettings />);
    const select = await screen.findByRole<HTMLSelectElement>('combobox', { name: /WebDAV at \/dav\// });
    expect(select.value).toBe('on');
    expect(Array.from(select.options).map((o) => o.value)).toEqual(['off', 'on', 'per-user']);
    fireEvent.change(select, { target: { value: 'per-user' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PUT')).toBe(true));
    const put = fetchMock.mock.calls.find(([, init]) => init?.method === 'PUT')!;
    expect((JSON.parse(String(put[1]?.body)) as Settings).webdav).toBe('per-user');
  });

  it('shows account passwords as accepted and saves WebDAV as tokens only', async () => {
    await renderWithApp(<GlobalSettings />);
    const box = await screen.findByRole<HTMLInputElement>('checkbox', {
      name: 'Accept account passwords (otherwise API tokens only)',
    });
    expect(box.checked).toBe(true);
    fireEvent.click(box);
    expect(box.checked).toBe(false);
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PUT')).toBe(true));
    const put = fetchMock.mock.calls.find(([, init]) => init?.method === 'PUT')!;
    const body = JSON.parse(String(put[1]?.body)) as Settings;
    expect(body.webdavPasswords).toBe(false);
    expect(body.webdav).toBe('on');
  });
});
