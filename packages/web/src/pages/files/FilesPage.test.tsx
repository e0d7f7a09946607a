import type { FileInfo } from '@filebrowser/contract';
import { cleanup, screen } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { FilesPage } from './FilesPage';

const entry = (path: string, isDir: boolean, size = 0): FileInfo => ({
  path,
  name: path.split('/').filter(Boolean).pop() ?? '',
  size,
  extension: '',
  modified: '2025-03-01T10:20:30Z',
  mode: isDir ? 2147484141 : 420,
  isDir,
  isSymlink: false,
  type: isDir ? '' : 'text',
});

const folder = (path: string, items: FileInfo[]): FileInfo => ({
  ...entry(path, true, 4096),
  items,
  numDirs: items.filter((item) => item.isDir).length,
  numFiles: items.filter((item) => !item.isDir).length,
  sorting: { by: 'name', asc: false },
});

async function open(route: string) {
  return renderWithApp(
    <Routes>
      <Route path="/files/*" element={<FilesPage />} />
    </Routes>,
    { route },
  );
}

describe('FilesPage', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const answer = (body: unknown, status = 200) =>
    fetchMock.mockResolvedValue(
      new Response(typeof body === 'string' ? body : JSON.stringify(body), { status }),
    );

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: tokenUser({ download: true }), jwt: 'a.b.c' });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('lists folders and files with links, sizes and dates', async () => {
    answer(folder('/docs/', [entry('/docs/photos', true, 4096), entry('/docs/notes.txt', false, 1536)]));
    await open('/files/docs/');
    const folderLink = await screen.findByRole('link', { name: /photos/ });
    expect(folderLink.getAttribute('href')).toBe('/files/docs/photos/');
    expect(screen.getByRole('link', { name: /notes\.txt/ }).getAttribute('href')).toBe(
      '/files/docs/notes.txt',
    );
    expect(screen.getByText('1.5 KiB')).toBeTruthy();
    expect(screen.getByRole('columnheader', { name: 'Last modified' })).toBeTruthy();
    expect(fetchMock.mock.calls[0]?.[0]).toBe('/api/resources/docs/');
  });

  it('encodes the path it asks for', async () => {
    answer(folder('/a b/#1/', []));
    await open('/files/a%20b/%231/');
    await screen.findByText('It feels lonely here...');
    expect(fetchMock.mock.calls[0]?.[0]).toBe('/api/resources/a%20b/%231/');
  });

  it('says so when a folder is empty', async () => {
    answer(folder('/empty/', []));
    await open('/files/empty/');
    expect(await screen.findByText('It feels lonely here...')).toBeTruthy();
  });

  it('refuses an answer for another path', async () => {
    answer(folder('/other/', []));
    await open('/files/docs/');
    expect(await screen.findByText('Data Mismatch!')).toBeTruthy();
  });

  it.each([
    [403, '403 Forbidden\n', "You don't have permissions to access this."],
    [404, '404 Not Found\n', "This location can't be reached."],
    [500, '500 Internal Server Error\n', 'Something really went wrong.'],
  ])('shows the error screen for %i', async (status, body, message) => {
    answer(body, status);
    await open('/files/docs/');
    expect(await screen.findByRole('heading', { name: message })).toBeTruthy();
  });

  it('shows the connection error when the server cannot be reached', async () => {
    fetchMock.mockRejectedValue(new TypeError('Failed to fetch'));
    await open('/files/');
    expect(await screen.findByRole('heading', { name: "The server can't be reached." })).toBeTruthy();
    expect(screen.getByText('cloud_off')).toBeTruthy();
  });

  it('previews a file that is not text, with its download link', async () => {
    answer({ ...entry('/docs/data.bin', false, 3), type: 'blob' });
    await open('/files/docs/data.bin');
    expect(await screen.findByRole('heading', { name: 'data.bin' })).toBeTruthy();
    expect(screen.getByText(/No preview available/)).toBeTruthy();
    for (const link of screen.getAllByRole('link', { name: /Download/ })) {
      expect(link.getAttribute('href')).toBe('/api/raw/docs/data.bin');
    }
  });

  it('opens a text file in the editor', async () => {
    useAuthStore.setState({ user: tokenUser({ download: true, modify: true }) });
    answer({ ...entry('/docs/notes.txt', false, 5), content: 'hello' });
    await open('/files/docs/notes.txt');
    expect(await screen.findByRole('heading', { name: 'notes.txt' })).toBeTruthy();
    expect(await screen.findByRole('button', { name: /Save/ }, { timeout: 15_000 })).toBeTruthy();
    expect((await screen.findByRole('textbox', { name: 'Contents of notes.txt' })).textContent).toBe('hello');
  }, 30_000);

  it('opens a textImmutable file read-only', async () => {
    useAuthStore.setState({ user: tokenUser({ download: true, modify: true }) });
    answer({ ...entry('/docs/locked.txt', false, 5), type: 'textImmutable', content: 'fixed' });
    await open('/files/docs/locked.txt');
    const text = await screen.findByRole('textbox', { name: 'Contents of locked.txt' }, { timeout: 15_000 });
    expect(text.getAttribute('aria-readonly')).toBe('true');
    expect(screen.getByText('Read-only')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /Save/ })).toBeNull();
  }, 30_000);
});
