import type { Settings } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startup } from '../../../startup';
import { useAuthStore } from '../../../stores/auth';
import { useThemeStore } from '../../../stores/theme';
import { useToastStore } from '../../../stores/toasts';
import { fakeToken, settingsFixture, tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { GlobalSettings } from './GlobalSettings';

const settings: Settings = settingsFixture({
  rules: [{ regex: false, allow: false, path: '/private', regexp: null }],
});

describe('GlobalSettings', () => {
  const fetchMock = vi.fn<typeof fetch>();
  let saved: Settings | undefined;

  beforeEach(() => {
    saved = undefined;
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockImplementation(async (_url, init) => {
      if (init?.method === 'PUT') {
        saved = JSON.parse(init.body as string) as Settings;
        return new Response('200 OK\n');
      }
      return Response.json(settings);
    });
    const admin = tokenUser({ admin: true }, { id: 1, username: 'admin' });
    useAuthStore.setState({ user: admin, jwt: fakeToken(admin) });
    useToastStore.setState({ toasts: [] });
    useThemeStore.getState().setTheme('');
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
    startup.EnableExec = true;
  });

  const field = (label: string) => screen.getByLabelText<HTMLInputElement>(label, { exact: true });
  const save = async () => {
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    });
    await vi.waitFor(() => expect(saved).toBeDefined());
  };

  it('shows every global setting of the specification', async () => {
    await renderWithApp(<GlobalSettings />);
    await screen.findByRole('heading', { name: 'Global settings' });
    for (const label of [
      'Allow users to sign up',
      'Automatically create a home directory for new users',
      'Base path of user home directories',
      'Path 1',
      'Execute on shell',
      'Instance name',
      'Theme',
      'Branding directory path',
      'Chunk size',
      'Retries after a failed chunk',
      'Scope',
      'Language',
    ]) {
      expect(screen.getByLabelText(label, { exact: true }), label).toBeTruthy();
    }
    expect(screen.getByRole('heading', { name: 'User default settings' })).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Command runner' })).toBeTruthy();
    expect(document.title).toBe('Global settings - File Browser');
  });

  it('leaves out the shell and the command runner when commands cannot run', async () => {
    startup.EnableExec = false;
    await renderWithApp(<GlobalSettings />);
    await screen.findByRole('heading', { name: 'Global settings' });
    expect(screen.queryByLabelText('Execute on shell')).toBeNull();
    expect(screen.queryByRole('heading', { name: 'Command runner' })).toBeNull();
  });

  it('sends the shell split by line, the chunk size in bytes and a retry count of at least 0', async () => {
    await renderWithApp(<GlobalSettings />);
    await screen.findByRole('heading', { name: 'Global settings' });
    fireEvent.change(field('Execute on shell'), { target: { value: 'bash\n -c \n\n' } });
    fireEvent.change(field('Chunk size'), { target: { value: '5MB' } });
    const retries = field('Retries after a failed chunk');
    fireEvent.change(retries, { target: { value: '-3' } });
    fireEvent.blur(retries);
    expect(retries.value).toBe('0');
    fireEvent.click(screen.getByRole('button', { name: 'New rule' }));
    fireEvent.change(field('Path 2'), { target: { value: '/public' } });
    await save();
    expect(saved?.shell).toEqual(['bash', '-c']);
    expect(saved?.tus).toEqual({ chunkSize: 5 * 1024 * 1024, retryCount: 0 });
    expect(saved?.rules).toEqual([
      { regex: false, allow: false, path: '/private', regexp: null },
      { regex: false, allow: true, path: '/public', regexp: { raw: '' } },
    ]);
    // The chunk size is shown back in tidy units.
    expect(field('Chunk size').value).toBe('5MB');
    expect(useToastStore.getState().toasts.map((t) => t.message)).toEqual(['Settings updated!']);
  });

  it('sends the trash switch and its retention in days', async () => {
    await renderWithApp(<GlobalSettings />);
    await screen.findByRole('heading', { name: 'Global settings' });
    const enabled = field('Move deleted files to the trash');
    expect(enabled.checked).toBe(true);
    const days = field('Days to keep deleted files');
    expect(days.value).toBe('30');
    fireEvent.change(days, { target: { value: '7' } });
    fireEvent.blur(days);
    fireEvent.click(enabled);
    await save();
    expect(saved?.trash).toEqual({ enabled: false, retentionDays: 7 });
  });

  it('sends the audit log retention in days', async () => {
    await renderWithApp(<GlobalSettings />);
    await screen.findByRole('heading', { name: 'Global settings' });
    const days = field('Days to keep audit records');
    expect(days.value).toBe('90');
    fireEvent.change(days, { target: { value: '0' } });
    fireEvent.blur(days);
    await save();
    expect(saved?.audit).toEqual({ retentionDays: 0 });
  });

  it('applies a new theme as soon as the settings are saved', async () => {
    await renderWithApp(<GlobalSettings />);
    await screen.findByRole('heading', { name: 'Global settings' });
    fireEvent.change(field('Theme'), { target: { value: 'dark' } });
    expect(document.documentElement.dataset.theme).toBeUndefined();
    await save();
    expect(saved?.branding.theme).toBe('dark');
    expect(document.documentElement.dataset.theme).toBe('dark');
  });

  it('keeps the theme when the server refuses the settings, and shows why', async () => {
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'PUT'
        ? new Response('400 Bad Request (global rule 1 has an invalid regular expression: [)\n', {
            status: 400,
          })
        : Response.json(settings),
    );
    await renderWithApp(<GlobalSettings />);
    await screen.findByRole('heading', { name: 'Global settings' });
    fireEvent.change(field('Theme'), { target: { value: 'light' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    });
    await vi.waitFor(() => expect(useToastStore.getState().toasts).toHaveLength(1));
    expect(useToastStore.getState().toasts[0]).toMatchObject({
      kind: 'error',
      message: '400 Bad Request (global rule 1 has an invalid regular expression: [)',
    });
    expect(document.documentElement.dataset.theme).toBeUndefined();
  });
});
