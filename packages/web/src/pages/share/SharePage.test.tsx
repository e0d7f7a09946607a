import type { FileInfo } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { renderWithApp } from '../../test/render';
import { SharePage } from './SharePage';

const item = (path: string, isDir = false, type = 'text'): FileInfo => ({
  path,
  name: path.split('/').pop() ?? '',
  size: 1536,
  extension: '',
  modified: '2025-03-01T10:20:30Z',
  mode: isDir ? 2147484141 : 420,
  isDir,
  isSymlink: false,
  type: isDir ? '' : type,
});

const folder = (items: FileInfo[], extra: Partial<FileInfo> = {}): FileInfo => ({
  ...item('/', true),
  name: 'docs',
  items,
  numDirs: items.filter((i) => i.isDir).length,
  numFiles: items.filter((i) => !i.isDir).length,
  sorting: { by: 'name', asc: false },
  ...extra,
});

describe('SharePage', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const requests: { url: string; password: string | null }[] = [];
  let answers: (() => Response)[];

  beforeEach(() => {
    requests.length = 0;
    answers = [];
    fetchMock.mockImplementation(async (input, init) => {
      requests.push({ url: String(input), password: new Headers(init?.headers).get('X-SHARE-PASSWORD') });
      const next = answers.shift();
      if (!next) throw new Error(`unexpected request ${String(input)}`);
      return next();
    });
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: null, jwt: null });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  const json =
    (body: unknown, status = 200) =>
    () =>
      new Response(JSON.stringify(body), { status });
  const text =
    (body: string, status: number, headers: Record<string, string> = {}) =>
    () =>
      new Response(body, { status, headers });

  const open = (route: string) =>
    renderWithApp(
      <Routes>
        <Route path="/share/*" element={<SharePage />} />
      </Routes>,
      { route },
    );

  it('asks for the password, says when it was wrong, then uses the token it earned', async () => {
    answers = [
      text('401 Unauthorized\n', 401),
      text('401 Unauthorized\n', 401),
      json(folder([item('/a.png', false, 'image')], { token: '123.abc' })),
    ];
    await open('/share/h1/');
    const password = await screen.findByLabelText('Password');
    expect(screen.queryByRole('alert')).toBeNull();
    expect(requests[0]).toEqual({ url: '/api/public/share/h1/', password: null });

    fireEvent.change(password, { target: { value: 'wrong one' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Submit' }));
    });
    expect((await screen.findByRole('alert')).textContent).toBe('Wrong credentials');
    expect(requests[1]?.password).toBe('wrong%20one');

    fireEvent.change(password, { target: { value: 'right+100%' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Submit' }));
    });
    expect(requests[2]?.password).toBe('right%2B100%25');
    fireEvent.click(await screen.findByRole('button', { name: /a\.png/ }));
    expect(screen.getByRole('img', { name: 'a.png' }).getAttribute('src')).toBe(
      '/api/public/dl/h1/a.png?inline=true&token=123.abc',
    );
  });

  it('shows the wait when the server refuses more guesses', async () => {
    answers = [
      text('401 Unauthorized\n', 401),
      text('429 Too Many Requests\n', 429, { 'Retry-After': '42' }),
    ];
    await open('/share/h1/');
    fireEvent.change(await screen.findByLabelText('Password'), { target: { value: 'x' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Submit' }));
    });
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Too many attempts. Please try again in 42 seconds.',
    );
  });

  it('shows 100 items and a +N tile that adds 100 more', async () => {
    const items = Array.from({ length: 250 }, (_, i) => item(`/f${String(i).padStart(3, '0')}.txt`));
    answers = [json(folder(items))];
    await open('/share/h2/');
    expect(await screen.findByText('250 items')).toBeTruthy();
    const list = screen.getByRole('list', { name: 'Shared items' });
    expect(list.querySelectorAll('[aria-pressed]')).toHaveLength(100);
    fireEvent.click(screen.getByRole('button', { name: '+150' }));
    expect(list.querySelectorAll('[aria-pressed]')).toHaveLength(200);
    fireEvent.click(screen.getByRole('button', { name: '+50' }));
    expect(list.querySelectorAll('[aria-pressed]')).toHaveLength(250);
    expect(screen.queryByRole('button', { name: /^\+/ })).toBeNull();
  });

  it('selects an item to preview it and offers its download', async () => {
    answers = [json(folder([item('/sub', true), item('/photo.jpg', false, 'image')], { token: '9.t' }))];
    await open('/share/h3/');
    fireEvent.click(await screen.findByRole('button', { name: /photo\.jpg/ }));
    const picture = screen.getByRole('img', { name: 'photo.jpg' });
    expect(picture.getAttribute('src')).toBe('/api/public/dl/h3/photo.jpg?inline=true&token=9.t');
    expect(screen.getByRole('button', { name: 'Copy download link' })).toBeTruthy();
    // A folder has no download link to copy, but can be opened.
    fireEvent.click(screen.getByRole('button', { name: /sub/ }));
    expect(screen.queryByRole('button', { name: 'Copy download link' })).toBeNull();
    expect(screen.getByRole('link', { name: /Open/ }).getAttribute('href')).toBe('/share/h3/sub/');
  });

  it('shows the lonely message for an empty folder and the QR code of its download link', async () => {
    answers = [json(folder([]))];
    await open('/share/h4/');
    expect(await screen.findByText('It feels lonely here...')).toBeTruthy();
    const qr = screen.getByRole('figure', { name: 'QR code of the download link' });
    expect(qr.querySelector('svg')?.getAttribute('height')).toBe('100');
  });

  it('shows a shared file with its size, date, download buttons and a 200 px QR code', async () => {
    answers = [json({ ...item('/ignored.txt'), path: '', name: 'report.pdf', type: 'pdf', size: 2048 })];
    await open('/share/h5');
    expect(await screen.findByRole('heading', { name: 'report.pdf' })).toBeTruthy();
    expect(screen.getByText('2 KiB')).toBeTruthy();
    expect(screen.getByRole('link', { name: /Download/ }).getAttribute('href')).toBe(
      '/api/public/dl/h5/report.pdf',
    );
    expect(screen.getByRole('link', { name: /Open in new tab/ }).getAttribute('href')).toBe(
      '/api/public/dl/h5/report.pdf?inline=true',
    );
    const qr = screen.getByRole('figure', { name: 'QR code of the download link' });
    expect(qr.querySelector('svg')?.getAttribute('height')).toBe('200');
  });

  it('shows the error screen for other answers', async () => {
    answers = [text('404 Not Found\n', 404)];
    await open('/share/gone/');
    expect(await screen.findByText("This location can't be reached.")).toBeTruthy();
  });
});
