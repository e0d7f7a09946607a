import type { TrashItem } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PromptHost } from '../../components/prompts/PromptHost';
import { useAuthStore } from '../../stores/auth';
import { useLayoutStore } from '../../stores/layout';
import { useToastStore } from '../../stores/toasts';
import { fakeToken, tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { TrashPage } from './TrashPage';

function item(overrides: Partial<TrashItem> = {}): TrashItem {
  return {
    id: 'aaaa',
    userID: 2,
    name: 'report.pdf',
    path: '/docs/report.pdf',
    folder: '/docs',
    size: 2048,
    isDir: false,
    deletedBy: 'alice',
    deletedAt: Date.now() - 3_600_000,
    expiresAt: 0,
    ...overrides,
  };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

const calls = (fetchMock: ReturnType<typeof vi.fn<typeof fetch>>) =>
  fetchMock.mock.calls.map(([url, init]) => `${init?.method ?? 'GET'} ${String(url)}`);

describe('TrashPage', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const alice = tokenUser({ create: true, modify: true, delete: true });

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: alice, jwt: fakeToken(alice) });
    useToastStore.setState({ toasts: [] });
    useLayoutStore.setState({ prompts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  const render = () =>
    renderWithApp(
      <>
        <TrashPage />
        <PromptHost />
      </>,
    );

  it('lists what was deleted with its name, original folder, size and date', async () => {
    fetchMock.mockResolvedValue(
      json([item(), item({ id: 'bbbb', name: 'old', path: '/old', folder: '/', isDir: true, size: 0 })]),
    );
    await render();
    const rows = await screen.findAllByRole('row');
    expect(calls(fetchMock)).toEqual(['GET /api/trash']);
    const cells = (i: number) =>
      within(rows[i]!)
        .getAllByRole('cell')
        .map((c) => c.textContent?.trim());
    expect(cells(1).slice(1, 4)).toEqual(['insert_drive_file report.pdf', '/docs', '2 KiB']);
    expect(cells(1)[4]).toMatch(/hour/);
    expect(cells(2).slice(1, 4)).toEqual(['folder old', '/', '0 B']);
    // Nothing selected: nothing to restore or delete yet; the trash can be emptied.
    expect(screen.getByRole<HTMLButtonElement>('button', { name: /Restore/ }).disabled).toBe(true);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: /Delete forever/ }).disabled).toBe(true);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: /Empty trash/ }).disabled).toBe(false);
  });

  it('says when the trash is empty', async () => {
    fetchMock.mockResolvedValue(json([]));
    await render();
    await screen.findByText('The trash is empty.');
    expect(screen.getByRole<HTMLButtonElement>('button', { name: /Empty trash/ }).disabled).toBe(true);
  });

  it('restores the selected items to where they were', async () => {
    fetchMock.mockImplementation(async (url, init) =>
      init?.method === 'POST'
        ? json({
            path: String(url).includes('aaaa') ? '/docs/report.pdf' : '/b.txt',
            recreatedFolders: false,
            copied: false,
          })
        : json([item(), item({ id: 'bbbb', name: 'b.txt', path: '/b.txt', folder: '/' })]),
    );
    await render();
    fireEvent.click(await screen.findByRole('checkbox', { name: 'Select all' }));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /Restore/ }));
    });
    await screen.findByText('The trash is empty.');
    expect(calls(fetchMock)).toEqual([
      'GET /api/trash',
      'POST /api/trash/aaaa/restore',
      'POST /api/trash/bbbb/restore',
    ]);
    expect(useToastStore.getState().toasts.map((t) => t.message)).toContain('Restored to /docs/report.pdf');
  });

  it('asks when the name is taken: keep both restores under a free name, cancel leaves the item', async () => {
    let attempts = 0;
    fetchMock.mockImplementation(async (url, init) => {
      if (init?.method !== 'POST') return json([item()]);
      attempts++;
      if (!String(url).includes('?'))
        return new Response('409 Conflict (report.pdf already exists in /docs)\n', { status: 409 });
      return json({ path: '/docs/report(1).pdf', recreatedFolders: false, copied: false });
    });
    await render();
    fireEvent.click(await screen.findByRole('checkbox', { name: 'Select report.pdf' }));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /Restore/ }));
    });
    let dialog = await screen.findByRole('dialog', { name: 'Replace or rename' });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    });
    expect(attempts).toBe(1);
    expect(screen.getByText('report.pdf')).toBeTruthy();

    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /Restore/ }));
    });
    dialog = await screen.findByRole('dialog', { name: 'Replace or rename' });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Rename' }));
    });
    await screen.findByText('The trash is empty.');
    expect(calls(fetchMock).slice(-2)).toEqual([
      'POST /api/trash/aaaa/restore',
      'POST /api/trash/aaaa/restore?rename=true',
    ]);
  });

  it('replaces what is there when asked to overwrite, then lists the replaced entry, now in the trash', async () => {
    let restored = false;
    fetchMock.mockImplementation(async (url, init) => {
      if (init?.method !== 'POST') return json(restored ? [item({ id: 'cccc', size: 512 })] : [item()]);
      if (!String(url).includes('?')) return new Response('409 Conflict\n', { status: 409 });
      restored = true;
      return json({ path: '/docs/report.pdf', recreatedFolders: false, copied: false });
    });
    await render();
    fireEvent.click(await screen.findByRole('checkbox', { name: 'Select report.pdf' }));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /Restore/ }));
    });
    const dialog = await screen.findByRole('dialog', { name: 'Replace or rename' });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Overwrite' }));
    });
    await screen.findByText('512 B');
    expect(calls(fetchMock).slice(-2)).toEqual([
      'POST /api/trash/aaaa/restore?override=true',
      'GET /api/trash',
    ]);
    expect(screen.getAllByRole('checkbox', { name: 'Select report.pdf' })).toHaveLength(1);
    expect(screen.queryByText('2 KiB')).toBeNull();
  });

  it('shows a refused restore and keeps the item', async () => {
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'POST'
        ? new Response('403 Forbidden (the original place is not in your scope)\n', { status: 403 })
        : json([item()]),
    );
    await render();
    fireEvent.click(await screen.findByRole('checkbox', { name: 'Select report.pdf' }));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /Restore/ }));
    });
    await vi.waitFor(() =>
      expect(
        useToastStore
          .getState()
          .toasts.map((t) => t.message)
          .join(),
      ).toContain('not in your scope'),
    );
    expect(screen.getByText('report.pdf')).toBeTruthy();
  });

  it('deletes the selected items forever after a confirmation', async () => {
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'DELETE'
        ? new Response(null, { status: 204 })
        : json([item(), item({ id: 'bbbb', name: 'keep.txt' })]),
    );
    await render();
    fireEvent.click(await screen.findByRole('checkbox', { name: 'Select report.pdf' }));
    fireEvent.click(screen.getByRole('button', { name: /Delete forever/ }));
    const dialog = screen.getByRole('dialog', { name: 'Delete forever?' });
    expect(calls(fetchMock)).toEqual(['GET /api/trash']);
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Delete forever' }));
    });
    expect(calls(fetchMock)).toEqual(['GET /api/trash', 'DELETE /api/trash/aaaa']);
    expect(screen.queryByText('report.pdf')).toBeNull();
    expect(screen.getByText('keep.txt')).toBeTruthy();
  });

  it('empties the trash after a confirmation', async () => {
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'DELETE' ? new Response(null, { status: 204 }) : json([item()]),
    );
    await render();
    fireEvent.click(await screen.findByRole('button', { name: /Empty trash/ }));
    const dialog = screen.getByRole('dialog', { name: 'Empty the trash?' });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Empty trash' }));
    });
    expect(calls(fetchMock)).toEqual(['GET /api/trash', 'DELETE /api/trash']);
    await screen.findByText('The trash is empty.');
  });

  it('offers only what the user’s permissions allow', async () => {
    const reader = tokenUser({});
    useAuthStore.setState({ user: reader, jwt: fakeToken(reader) });
    fetchMock.mockResolvedValue(json([item()]));
    await render();
    await screen.findByText('report.pdf');
    expect(screen.queryByRole('button', { name: /Restore/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Delete forever/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Empty trash/ })).toBeNull();
  });
});
