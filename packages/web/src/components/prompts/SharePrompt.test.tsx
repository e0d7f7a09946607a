import type { Share } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { useLayoutStore } from '../../stores/layout';
import { useToastStore } from '../../stores/toasts';
import { tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { PromptHost } from './PromptHost';

const now = Math.floor(Date.now() / 1000);
const link = (hash: string, expire: number, hasPassword = false): Share => ({
  hash,
  path: '/docs/a.txt',
  userID: 2,
  expire,
  hasPassword,
});

interface Call {
  method: string;
  url: string;
  body?: unknown;
}

describe('SharePrompt', () => {
  const fetchMock = vi.fn<typeof fetch>();
  let calls: Call[];
  let existing: Share[];
  let created: Share;

  beforeEach(() => {
    calls = [];
    existing = [];
    created = link('new-link', 0);
    fetchMock.mockImplementation(async (input, init) => {
      const url = String(input);
      const method = init?.method ?? 'GET';
      calls.push({ method, url, ...(init?.body ? { body: JSON.parse(String(init.body)) } : {}) });
      if (method === 'GET') return new Response(JSON.stringify(existing), { status: 200 });
      if (method === 'POST') return new Response(JSON.stringify(created), { status: 200 });
      return new Response('200 OK\n', { status: 200 });
    });
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: tokenUser({ share: true, download: true }), jwt: 'a.b.c' });
    useLayoutStore.setState({ prompts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  async function openPrompt(path: string) {
    await renderWithApp(<PromptHost />);
    await act(async () => {
      useLayoutStore.getState().openPrompt('share', { path });
    });
    return screen.findByRole('dialog', { name: 'Share' });
  }

  /** Each row's link and expiry as a person reads them (icons are hidden from them). */
  const rows = () =>
    within(screen.getByRole('list', { name: 'Share links' }))
      .getAllByRole('listitem')
      .map((li) => {
        const text = li.querySelector('.share-links__text')!.cloneNode(true) as Element;
        text.querySelectorAll('[aria-hidden="true"]').forEach((icon) => icon.remove());
        return text.textContent;
      });

  it('lists the path’s links, permanent first then by expiry, with relative expiry', async () => {
    existing = [
      link('later', now + 3 * 86400 + 60),
      link('forever', 0, true),
      link('soon', now + 2 * 3600 + 60),
    ];
    await openPrompt('/docs/a.txt');
    await screen.findByRole('list', { name: 'Share links' });
    expect(calls[0]).toMatchObject({ method: 'GET', url: '/api/share/docs/a.txt' });
    expect(rows()).toEqual(['foreverProtected by a passwordpermanent', 'soonin 2 hours', 'laterin 3 days']);
    // A file's links can also be copied as direct download links.
    expect(screen.getByRole('button', { name: 'Copy download link soon' })).toBeTruthy();
  });

  it('offers no download link for a folder', async () => {
    existing = [link('folder-link', 0)];
    await openPrompt('/docs/');
    await screen.findByRole('button', { name: 'Copy link folder-link' });
    expect(screen.queryByRole('button', { name: 'Copy download link folder-link' })).toBeNull();
  });

  it('starts with the form when there is no link, and Cancel then closes the prompt', async () => {
    await openPrompt('/docs/a.txt');
    await screen.findByLabelText('Duration');
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('creates a link from the form with a trimmed password and shows it in order', async () => {
    existing = [link('soon', now + 3600)];
    created = link('fresh', 0, true);
    await openPrompt('/docs/a.txt');
    fireEvent.click(await screen.findByRole('button', { name: 'New' }));
    fireEvent.change(screen.getByLabelText('Duration'), { target: { value: '2' } });
    fireEvent.change(screen.getByLabelText('Unit'), { target: { value: 'days' } });
    fireEvent.change(screen.getByLabelText('Password (optional)'), { target: { value: '  secret  ' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Share' }));
    });
    expect(calls.at(-1)).toEqual({
      method: 'POST',
      url: '/api/share/docs/a.txt',
      body: { expires: '2', unit: 'days', password: 'secret' },
    });
    await screen.findByRole('list', { name: 'Share links' });
    expect(rows()).toEqual(['freshProtected by a passwordpermanent', 'soonin 1 hour']);
  });

  it('sends 0 as a permanent link and refuses durations out of range', async () => {
    await openPrompt('/docs/');
    const duration = await screen.findByLabelText('Duration');
    fireEvent.change(duration, { target: { value: '2147483648' } });
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Share' }).disabled).toBe(true);
    fireEvent.change(duration, { target: { value: '0' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Share' }));
    });
    expect(calls.at(-1)).toEqual({
      method: 'POST',
      url: '/api/share/docs/',
      body: { expires: '', unit: 'hours', password: '' },
    });
  });

  it('deletes after a confirmation and returns to the form when the last link is gone', async () => {
    existing = [link('one', 0), link('two', now + 3600)];
    await openPrompt('/docs/a.txt');
    fireEvent.click(await screen.findByRole('button', { name: 'Delete link one' }));
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(rows()).toHaveLength(2);

    fireEvent.click(screen.getByRole('button', { name: 'Delete link one' }));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    });
    expect(calls.at(-1)).toMatchObject({ method: 'DELETE', url: '/api/share/one' });
    expect(rows()).toHaveLength(1);

    fireEvent.click(screen.getByRole('button', { name: 'Delete link two' }));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    });
    expect(await screen.findByLabelText('Duration')).toBeTruthy();
  });

  it('copies a link and says so', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    useToastStore.setState({ toasts: [] });
    existing = [link('copy-me', 0)];
    await openPrompt('/docs/a.txt');
    await act(async () => {
      fireEvent.click(await screen.findByRole('button', { name: 'Copy download link copy-me' }));
    });
    expect(writeText).toHaveBeenCalledWith(`${window.location.origin}/api/public/dl/copy-me/a.txt`);
    expect(useToastStore.getState().toasts.map((toast) => toast.message)).toEqual(['Link copied!']);
  });
});
