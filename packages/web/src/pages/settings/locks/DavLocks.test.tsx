import type { DavLockInfo } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PromptHost } from '../../../components/prompts/PromptHost';
import { useAuthStore } from '../../../stores/auth';
import { useLayoutStore } from '../../../stores/layout';
import { useToastStore } from '../../../stores/toasts';
import { fakeToken, tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { DavLocks } from './DavLocks';

const lock = (over: Partial<DavLockInfo> = {}): DavLockInfo => ({
  token: 'opaquelocktoken:0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9',
  path: '/team/plan.txt',
  userID: 2,
  username: 'ann',
  scope: 'exclusive',
  depth: '0',
  owner: 'ann’s laptop',
  createdAt: Date.now() - 60_000,
  expiresAt: Date.now() + 3_600_000,
  ...over,
});

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

describe('DavLocks', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const admin = tokenUser({ admin: true });

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: admin, jwt: fakeToken(admin) });
    useToastStore.setState({ toasts: [] });
    useLayoutStore.setState({ prompts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('lists every lock with its place, holder, kind, owner and end', async () => {
    fetchMock.mockResolvedValue(
      json([
        lock(),
        lock({
          token: 'opaquelocktoken:11111111-2222-4333-8444-555555555555',
          path: '/team/dir',
          username: 'bob',
          scope: 'shared',
          depth: 'infinity',
          owner: '',
        }),
      ]),
    );
    await renderWithApp(<DavLocks />);
    const rows = await screen.findAllByRole('row');
    expect(rows).toHaveLength(3);
    const cells = (row: HTMLElement) =>
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent);
    expect(cells(rows[1]!).slice(0, 4)).toEqual([
      '/team/plan.txt',
      'ann',
      'Exclusive, this item only',
      'ann’s laptop',
    ]);
    expect(cells(rows[2]!).slice(0, 4)).toEqual(['/team/dir', 'bob', 'Shared, with everything inside', '']);
    expect(fetchMock.mock.calls[0]![0]).toBe('/api/dav/locks');
    expect(document.title).toBe('WebDAV locks - File Browser');
  });

  it('breaks a lock after a confirmation, and says so when none is left', async () => {
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'DELETE' ? new Response(null, { status: 204 }) : json([lock()]),
    );
    await renderWithApp(
      <>
        <DavLocks />
        <PromptHost />
      </>,
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Break the lock of ann on /team/plan.txt' }));
    const dialog = screen.getByRole('dialog', { name: 'Break lock' });
    expect(dialog.textContent).toContain('Others may change it at once');
    expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'DELETE')).toBe(false);
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Break' }));
    });
    const del = fetchMock.mock.calls.find(([, init]) => init?.method === 'DELETE')!;
    expect(del[0]).toBe(`/api/dav/locks/${encodeURIComponent(lock().token)}`);
    expect(screen.queryAllByRole('row')).toHaveLength(0);
    expect(useToastStore.getState().toasts.map((toast) => toast.message)).toContain('Lock broken!');
  });
});
