import { TEXT_CONTENT_LIMIT, type FileInfo, type Permissions } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { Route, Routes, useLocation } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Header } from '../../components/layout/Header';
import { PromptHost } from '../../components/prompts/PromptHost';
import { useAuthStore } from '../../stores/auth';
import { useClipboardStore } from '../../stores/clipboard';
import { useFilesStore } from '../../stores/files';
import { useJobsStore } from '../../stores/jobs';
import { useLayoutStore } from '../../stores/layout';
import { useToastStore } from '../../stores/toasts';
import { tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { EMPTY_SELECTION } from '../../utils/selection';
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

const folder = (path: string, items: FileInfo[], sorting = { by: 'name', asc: false }): FileInfo => ({
  ...entry(path, true, 4096),
  items,
  numDirs: items.filter((item) => item.isDir).length,
  numFiles: items.filter((item) => !item.isDir).length,
  sorting,
});

const ALL: Partial<Permissions> = { create: true, rename: true, delete: true, download: true, modify: true };

const docs = () =>
  folder('/docs/', [
    entry('/docs/photos', true, 4096),
    entry('/docs/a.txt', false, 10),
    entry('/docs/b.txt', false, 1536),
    entry('/docs/c.txt', false, 30),
    entry('/docs/d.txt', false, 40),
  ]);

function Where() {
  const location = useLocation();
  return <output data-testid="location">{location.pathname}</output>;
}

async function open(route: string) {
  return renderWithApp(
    <>
      <Header />
      <Routes>
        <Route
          path="/files/*"
          element={
            <>
              <FilesPage />
              <Where />
            </>
          }
        />
      </Routes>
      <PromptHost />
    </>,
    { route },
  );
}

interface Call {
  method: string;
  url: string;
  body: string | null;
}

describe('FilesPage', () => {
  const fetchMock = vi.fn<typeof fetch>();
  let calls: Call[] = [];
  /** Answers by method and path; the last matching route wins. */
  let routes: { method: string; path: string | RegExp; answer: () => Response }[] = [];
  const on = (method: string, path: string | RegExp, body: unknown, status = 200) =>
    routes.push({
      method,
      path,
      answer: () => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status }),
    });
  const sent = (method: string) => calls.filter((call) => call.method === method);
  const anchorClicks = vi.fn<(href: string) => void>();

  beforeEach(() => {
    calls = [];
    routes = [];
    fetchMock.mockImplementation(async (input, init) => {
      const url = String(input);
      const method = init?.method ?? 'GET';
      calls.push({ method, url, body: typeof init?.body === 'string' ? init.body : null });
      const path = url.split('?')[0] ?? url;
      const route = [...routes]
        .reverse()
        .find(
          (candidate) =>
            candidate.method === method &&
            (typeof candidate.path === 'string' ? candidate.path === path : candidate.path.test(url)),
        );
      return route ? route.answer() : new Response('404 Not Found\n', { status: 404 });
    });
    vi.stubGlobal('fetch', fetchMock);
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      anchorClicks(this.getAttribute('href') ?? '');
    });
    useAuthStore.setState({ user: tokenUser(ALL), jwt: 'a.b.c' });
    useFilesStore.setState({ selection: EMPTY_SELECTION, multiple: false, listing: null });
    useClipboardStore.setState({ clipboard: null });
    useLayoutStore.setState({ prompts: [] });
    useToastStore.setState({ toasts: [] });
    useJobsStore.setState({ jobs: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    fetchMock.mockReset();
    anchorClicks.mockReset();
  });

  const item = (name: string) => {
    const found = document.querySelector<HTMLElement>(`.item[data-name="${name}"]`);
    if (!found) throw new Error(`no entry ${name}`);
    return found;
  };
  const click = (name: string, init: MouseEventInit = {}) =>
    fireEvent.click(item(name), { detail: 1, ...init });
  const selected = () =>
    [...document.querySelectorAll<HTMLElement>('.item[aria-selected="true"]')].map((el) => el.dataset.name);
  const key = (init: KeyboardEventInit) => act(() => void fireEvent.keyDown(window, init));

  describe('listing', () => {
    it('lists folders and files with links, sizes and dates', async () => {
      on(
        'GET',
        '/api/resources/docs/',
        folder('/docs/', [entry('/docs/photos', true, 4096), entry('/docs/notes.txt', false, 1536)]),
      );
      await open('/files/docs/');
      const folderLink = await screen.findByRole('link', { name: 'photos' });
      expect(folderLink.getAttribute('href')).toBe('/files/docs/photos/');
      expect(screen.getByRole('link', { name: 'notes.txt' }).getAttribute('href')).toBe(
        '/files/docs/notes.txt',
      );
      expect(screen.getAllByText('1.5 KiB').length).toBeGreaterThan(0);
      expect(screen.getByRole('columnheader', { name: 'Last modified' })).toBeTruthy();
      expect(calls[0]?.url).toBe('/api/resources/docs/');
    });

    it('encodes the path it asks for', async () => {
      on('GET', '/api/resources/a%20b/%231/', folder('/a b/#1/', []));
      await open('/files/a%20b/%231/');
      await screen.findByText('It feels lonely here...');
      expect(calls[0]?.url).toBe('/api/resources/a%20b/%231/');
    });

    it('says so when a folder is empty', async () => {
      on('GET', '/api/resources/empty/', folder('/empty/', []));
      await open('/files/empty/');
      expect(await screen.findByText('It feels lonely here...')).toBeTruthy();
    });

    it('refuses an answer for another path', async () => {
      on('GET', '/api/resources/docs/', folder('/other/', []));
      await open('/files/docs/');
      expect(await screen.findByText('Data Mismatch!')).toBeTruthy();
    });

    it.each([
      [403, '403 Forbidden\n', "You don't have permissions to access this."],
      [404, '404 Not Found\n', "This location can't be reached."],
      [500, '500 Internal Server Error\n', 'Something really went wrong.'],
    ])('shows the error screen for %i', async (status, body, message) => {
      on('GET', '/api/resources/docs/', body, status);
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
      on('GET', '/api/resources/docs/data.bin', { ...entry('/docs/data.bin', false, 3), type: 'blob' });
      await open('/files/docs/data.bin');
      expect(await screen.findByRole('heading', { name: 'data.bin' })).toBeTruthy();
      expect(screen.getByText(/No preview available/)).toBeTruthy();
      for (const link of screen.getAllByRole('link', { name: /Download/ })) {
        expect(link.getAttribute('href')).toBe('/api/raw/docs/data.bin');
      }
    });

    it('opens a text file in the editor', async () => {
      useAuthStore.setState({ user: tokenUser({ download: true, modify: true }) });
      on('GET', '/api/resources/docs/notes.txt', { ...entry('/docs/notes.txt', false, 5), content: 'hello' });
      await open('/files/docs/notes.txt');
      expect(await screen.findByRole('heading', { name: 'notes.txt' })).toBeTruthy();
      expect(await screen.findByRole('button', { name: /Save/ }, { timeout: 15_000 })).toBeTruthy();
      expect((await screen.findByRole('textbox', { name: 'Contents of notes.txt' })).textContent).toBe(
        'hello',
      );
    }, 30_000);

    it('offers a text file past TEXT_CONTENT_LIMIT for download, saying it is too large to edit here', async () => {
      useAuthStore.setState({ user: tokenUser({ download: true, modify: true }) });
      on('GET', '/api/resources/docs/big.log', entry('/docs/big.log', false, TEXT_CONTENT_LIMIT + 1));
      await open('/files/docs/big.log');
      expect(await screen.findByRole('heading', { name: 'big.log' })).toBeTruthy();
      expect(screen.getByText(/Too large to edit here/)).toBeTruthy();
      expect(screen.queryByText(/No preview available/)).toBeNull();
      expect(screen.queryByRole('textbox', { name: 'Contents of big.log' })).toBeNull();
      expect(screen.queryByRole('button', { name: /Save/ })).toBeNull();
      const links = screen.getAllByRole('link', { name: /Download/ });
      expect(links.length).toBeGreaterThan(0);
      for (const link of links) expect(link.getAttribute('href')).toBe('/api/raw/docs/big.log');
    });

    it('opens a textImmutable file read-only', async () => {
      useAuthStore.setState({ user: tokenUser({ download: true, modify: true }) });
      on('GET', '/api/resources/docs/locked.txt', {
        ...entry('/docs/locked.txt', false, 5),
        type: 'textImmutable',
        content: 'fixed',
      });
      await open('/files/docs/locked.txt');
      const text = await screen.findByRole(
        'textbox',
        { name: 'Contents of locked.txt' },
        { timeout: 15_000 },
      );
      expect(text.getAttribute('aria-readonly')).toBe('true');
      expect(screen.getByText('Read-only')).toBeTruthy();
      expect(screen.queryByRole('button', { name: /Save/ })).toBeNull();
    }, 30_000);

    it('puts folders first in the tile views, under their headings', async () => {
      useAuthStore.setState({ user: tokenUser(ALL, { viewMode: 'mosaic' }) });
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('heading', { name: 'Folders' });
      expect(screen.getByRole('heading', { name: 'Files' })).toBeTruthy();
      expect(document.querySelector('.listing')?.classList.contains('listing--mosaic')).toBe(true);
    });
  });

  describe('selection', () => {
    it('selects with a click, adds with Ctrl or Meta, adds ranges with Shift', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });

      click('a.txt');
      expect(selected()).toEqual(['a.txt']);
      click('c.txt');
      expect(selected()).toEqual(['c.txt']);
      click('photos', { ctrlKey: true });
      expect(selected()).toEqual(['photos', 'c.txt']);
      click('d.txt', { metaKey: true });
      expect(selected()).toEqual(['photos', 'c.txt', 'd.txt']);
      click('photos', { ctrlKey: true });
      expect(selected()).toEqual(['c.txt', 'd.txt']);

      click('b.txt');
      click('d.txt', { shiftKey: true });
      expect(selected()).toEqual(['b.txt', 'c.txt', 'd.txt']);
      expect(screen.getByText('3 selected')).toBeTruthy();
      // The counter on the button is part of its name (label in name, WCAG 2.5.3).
      expect(screen.getByRole('button', { name: 'Download 3' }).textContent).toContain('3');
    });

    it('opens with a double click within 300 ms', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('GET', '/api/resources/docs/photos/', folder('/docs/photos/', []));
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'photos' });
      click('photos');
      expect(screen.getByTestId('location').textContent).toBe('/files/docs/');
      click('photos');
      await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('/files/docs/photos/'));
    });

    it('does not open when the second click comes after 300 ms', async () => {
      const now = vi.spyOn(performance, 'now').mockReturnValue(1000);
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'photos' });
      click('photos');
      now.mockReturnValue(1301);
      click('photos');
      expect(screen.getByTestId('location').textContent).toBe('/files/docs/');
      expect(selected()).toEqual(['photos']);
    });

    it('does not count a Ctrl click and a plain click as a double click', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'photos' });
      click('photos', { ctrlKey: true });
      click('photos');
      expect(screen.getByTestId('location').textContent).toBe('/files/docs/');
      expect(selected()).toEqual(['photos']);
    });

    it('opens with one click for users with the single-click setting', async () => {
      useAuthStore.setState({ user: tokenUser(ALL, { singleClick: true }) });
      on('GET', '/api/resources/docs/', docs());
      on('GET', '/api/resources/docs/a.txt', entry('/docs/a.txt', false, 10));
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('/files/docs/a.txt'));
    });

    it('adds and removes entries with plain clicks in "select multiple" mode', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      const toggle = screen.getByRole('button', { name: 'Select multiple' });
      fireEvent.click(toggle);
      expect(toggle.getAttribute('aria-pressed')).toBe('true');
      click('a.txt');
      click('c.txt');
      expect(selected()).toEqual(['a.txt', 'c.txt']);
      fireEvent.click(document.querySelector('.listing__body') as Element);
      expect(selected()).toEqual(['a.txt', 'c.txt']);
    });

    it('opens an entry with Enter on its name', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('GET', '/api/resources/docs/photos/', folder('/docs/photos/', []));
      await open('/files/docs/');
      const link = await screen.findByRole('link', { name: 'photos' });
      fireEvent.click(link, { detail: 0 });
      await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('/files/docs/photos/'));
    });
  });

  describe('arrow keys', () => {
    const link = (name: string) => screen.getByRole('link', { name });
    /** Presses a key on the focused entry, as the browser sends it there. */
    const press = (key: string, init: KeyboardEventInit = {}) => {
      const focused = document.activeElement;
      if (!(focused instanceof HTMLElement)) throw new Error('nothing has the focus');
      act(() => void fireEvent.keyDown(focused, { key, ...init }));
    };
    const focusedName = () => document.activeElement?.closest<HTMLElement>('.item')?.dataset.name;

    it('Up and Down move through the list, the selection follows, Shift extends it, Enter opens', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('GET', '/api/resources/docs/photos/', folder('/docs/photos/', []));
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      act(() => link('a.txt').focus());

      press('ArrowDown');
      expect(focusedName()).toBe('b.txt');
      expect(selected()).toEqual(['b.txt']);
      press('ArrowDown', { shiftKey: true });
      press('ArrowDown', { shiftKey: true });
      expect(focusedName()).toBe('d.txt');
      expect(selected()).toEqual(['b.txt', 'c.txt', 'd.txt']);
      // Back towards the anchor shrinks the range.
      press('ArrowUp', { shiftKey: true });
      expect(selected()).toEqual(['b.txt', 'c.txt']);
      // The last entry is the end: Down stays there; Left and Right mean nothing in the list.
      press('End');
      press('ArrowDown');
      press('ArrowLeft');
      expect(focusedName()).toBe('d.txt');
      expect(selected()).toEqual(['d.txt']);
      press('Home');
      expect(focusedName()).toBe('photos');
      expect(selected()).toEqual(['photos']);

      // The listing is one Tab stop: the entry last focused.
      const tabbable = [...document.querySelectorAll<HTMLElement>('.item__name')].filter(
        (el) => el.tabIndex === 0,
      );
      expect(tabbable.map((el) => el.textContent)).toEqual(['photos']);

      // After a click the keys go on from the entry clicked.
      click('b.txt');
      press('ArrowDown');
      expect(focusedName()).toBe('c.txt');
      expect(selected()).toEqual(['c.txt']);
      press('Home');

      // Enter on a link is a click without a pointer, which opens.
      fireEvent.click(document.activeElement!, { detail: 0 });
      await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('/files/docs/photos/'));
    });

    it('Left and Right move through the mosaic; Up and Down keep the column across the headings', async () => {
      useAuthStore.setState({ user: tokenUser(ALL, { viewMode: 'mosaic' }) });
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      // Two tiles a row (the test DOM has no width): photos | a.txt b.txt | c.txt d.txt
      act(() => link('a.txt').focus());
      press('ArrowRight');
      expect(focusedName()).toBe('b.txt');
      press('ArrowDown');
      expect(focusedName()).toBe('d.txt');
      press('ArrowLeft');
      expect(focusedName()).toBe('c.txt');
      press('ArrowUp');
      expect(focusedName()).toBe('a.txt');
      press('ArrowRight');
      // The folders' row has one tile: Up from the second column lands on it.
      press('ArrowUp');
      expect(focusedName()).toBe('photos');
      expect(selected()).toEqual(['photos']);
      press('ArrowRight', { shiftKey: true });
      press('ArrowRight', { shiftKey: true });
      expect(selected()).toEqual(['photos', 'a.txt', 'b.txt']);
    });

    it('moves the focus without touching the selection in "select multiple" mode', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      act(() => useFilesStore.getState().setMultiple(true));
      act(() => link('a.txt').focus());
      press(' ');
      press('ArrowDown');
      press('ArrowDown');
      press(' ');
      expect(focusedName()).toBe('c.txt');
      expect(selected()).toEqual(['a.txt', 'c.txt']);
    });
  });

  describe('keyboard', () => {
    it('Escape clears the selection, Ctrl+A selects everything', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      key({ key: 'a', ctrlKey: true });
      expect(selected()).toEqual(['photos', 'a.txt', 'b.txt', 'c.txt', 'd.txt']);
      key({ key: 'Escape' });
      expect(selected()).toEqual([]);
    });

    it('F2 renames exactly one selected entry, with the name trimmed', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('PATCH', /^\/api\/resources\/docs\/a\.txt\?/, '200 OK\n');
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      key({ key: 'F2' });
      expect(screen.queryByRole('dialog')).toBeNull();
      click('a.txt');
      click('b.txt', { ctrlKey: true });
      key({ key: 'F2' });
      expect(screen.queryByRole('dialog')).toBeNull();
      click('a.txt');
      key({ key: 'F2' });
      const dialog = await screen.findByRole('dialog', { name: 'Rename' });
      const input = within(dialog).getByRole('textbox');
      expect((input as HTMLInputElement).value).toBe('a.txt');
      fireEvent.change(input, { target: { value: '  new name%.txt ' } });
      fireEvent.click(within(dialog).getByRole('button', { name: 'Rename' }));
      await waitFor(() => expect(sent('PATCH')).toHaveLength(1));
      expect(sent('PATCH')[0]?.url).toBe(
        '/api/resources/docs/a.txt?action=rename&destination=%2Fdocs%2Fnew%2520name%2525.txt&override=false&rename=false',
      );
      await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    });

    it('Delete asks, then deletes every selected entry and reloads', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('DELETE', /^\/api\/resources\/docs\//, '', 204);
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      click('photos', { ctrlKey: true });
      key({ key: 'Delete' });
      const dialog = await screen.findByRole('dialog', { name: 'Delete' });
      expect(within(dialog).getByText('Are you sure you want to delete these 2 items?')).toBeTruthy();
      const gets = sent('GET').length;
      fireEvent.click(within(dialog).getByRole('button', { name: /Delete/ }));
      await within(dialog).findByRole('button', { name: /Deleted/ });
      expect(sent('DELETE').map((call) => call.url)).toEqual([
        '/api/resources/docs/photos',
        '/api/resources/docs/a.txt',
      ]);
      await waitFor(() => expect(sent('GET').length).toBeGreaterThan(gets));
      await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    });

    it('a failed delete shows the error and reloads the listing', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('DELETE', /^\/api\/resources\/docs\//, '403 Forbidden\n', 403);
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      key({ key: 'Delete' });
      const dialog = await screen.findByRole('dialog', { name: 'Delete' });
      const gets = sent('GET').length;
      fireEvent.click(within(dialog).getByRole('button', { name: /Delete/ }));
      await waitFor(() => expect(useToastStore.getState().toasts[0]?.message).toBe('403 Forbidden'));
      await waitFor(() => expect(sent('GET').length).toBeGreaterThan(gets));
      expect(screen.queryByRole('dialog')).toBeNull();
    });

    it('Ctrl+C then Ctrl+V in the same folder copies with rename', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('POST', '/api/jobs', { id: 'job-copy-1' }, 202);
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'b.txt' });
      click('b.txt');
      key({ key: 'c', ctrlKey: true });
      expect(useClipboardStore.getState().clipboard).toEqual({
        key: 'c',
        items: [{ from: '/docs/b.txt', name: 'b.txt' }],
        path: '/docs/',
      });
      key({ key: 'v', ctrlKey: true });
      await waitFor(() => expect(sent('POST')).toHaveLength(1));
      expect(JSON.parse(sent('POST')[0]!.body!)).toEqual({
        action: 'copy',
        items: ['/docs/b.txt'],
        destination: '/docs',
        override: false,
        rename: true,
      });
      // The copy runs as a job the panel follows.
      await waitFor(() => expect(useJobsStore.getState().jobs[0]?.id).toBe('job-copy-1'));
      // A copy can be pasted again.
      expect(useClipboardStore.getState().clipboard).not.toBeNull();
    });

    it('Ctrl+X then Ctrl+V elsewhere asks about clashes, and the cut is used up by the move', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('GET', '/api/resources/other/', folder('/other/', [entry('/other/a.txt', false, 1)]));
      on('POST', '/api/jobs', { id: 'job-move-1' }, 202);
      const { unmount } = await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      click('b.txt', { ctrlKey: true });
      key({ key: 'x', ctrlKey: true });
      expect(item('a.txt').classList.contains('item--cut')).toBe(true);
      unmount();

      await open('/files/other/');
      await screen.findByRole('link', { name: 'a.txt' });
      key({ key: 'v', ctrlKey: true });
      const dialog = await screen.findByRole('dialog', { name: 'Replace or rename' });
      expect(sent('POST')).toHaveLength(0);
      fireEvent.click(within(dialog).getByRole('button', { name: 'Rename' }));
      await waitFor(() => expect(sent('POST')).toHaveLength(1));
      expect(JSON.parse(sent('POST')[0]!.body!)).toEqual({
        action: 'rename',
        items: ['/docs/a.txt', '/docs/b.txt'],
        destination: '/other',
        override: false,
        rename: true,
      });
      await waitFor(() => expect(useClipboardStore.getState().clipboard).toBeNull());
    });

    it('Ctrl+S downloads one selected file directly', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      key({ key: 's', ctrlKey: true });
      expect(anchorClicks).toHaveBeenCalledWith('/api/raw/docs/a.txt');
    });

    it('leaves the keys alone while a prompt is open or a field has the focus', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      const input = document.createElement('input');
      document.body.appendChild(input);
      fireEvent.keyDown(input, { key: 'Delete' });
      expect(screen.queryByRole('dialog')).toBeNull();
      input.remove();
      act(() => void useLayoutStore.getState().openPrompt('help', {}));
      fireEvent.keyDown(window, { key: 'a', ctrlKey: true });
      expect(selected()).toEqual(['a.txt']);
    });
  });

  describe('actions', () => {
    it('saves a new sorting to the user and reloads', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('PUT', '/api/users/2', '200 OK\n');
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      const name = screen.getByRole('columnheader', { name: 'Name' });
      expect(name.getAttribute('aria-sort')).toBe('ascending');
      fireEvent.click(within(screen.getByRole('columnheader', { name: 'Size' })).getByRole('button'));
      await waitFor(() => expect(sent('PUT')).toHaveLength(1));
      expect(JSON.parse(sent('PUT')[0]?.body ?? '')).toEqual({
        what: 'user',
        which: ['sorting'],
        data: { id: 2, sorting: { by: 'size', asc: false } },
      });
      await waitFor(() => expect(sent('GET')).toHaveLength(2));
    });

    it('switches the view and saves it to the user', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('PUT', '/api/users/2', '200 OK\n');
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      fireEvent.click(screen.getByRole('button', { name: 'Switch view (Mosaic)' }));
      expect(document.querySelector('.listing--mosaic')).not.toBeNull();
      await waitFor(() => expect(sent('PUT')).toHaveLength(1));
      expect(JSON.parse(sent('PUT')[0]?.body ?? '')).toEqual({
        what: 'user',
        which: ['viewMode'],
        data: { id: 2, viewMode: 'mosaic' },
      });
      fireEvent.click(screen.getByRole('button', { name: 'Switch view (Gallery)' }));
      expect(document.querySelector('.listing--gallery')).not.toBeNull();
      fireEvent.click(screen.getByRole('button', { name: 'Switch view (List)' }));
      expect(document.querySelector('.listing--list')).not.toBeNull();
    });

    it('hides what the user may not do', async () => {
      useAuthStore.setState({ user: tokenUser({}) });
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      for (const label of ['Rename', 'Copy file', 'Move file', 'Delete', 'Download']) {
        expect(screen.queryByRole('button', { name: new RegExp(`^${label}\\b`) })).toBeNull();
      }
      expect(screen.getByRole('button', { name: 'Info' })).toBeTruthy();
      expect(item('a.txt').getAttribute('draggable')).toBe('false');
      key({ key: 'Delete' });
      key({ key: 'F2' });
      key({ key: 'c', ctrlKey: true });
      expect(screen.queryByRole('dialog')).toBeNull();
      expect(useClipboardStore.getState().clipboard).toBeNull();
    });

    it('shows rename only for exactly one selected entry', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      expect(screen.queryByRole('button', { name: 'Rename' })).toBeNull();
      click('a.txt');
      expect(screen.getByRole('button', { name: 'Rename' })).toBeTruthy();
      click('b.txt', { ctrlKey: true });
      expect(screen.queryByRole('button', { name: 'Rename' })).toBeNull();
      expect(screen.getByRole('button', { name: 'Move file' })).toBeTruthy();
    });

    it('downloads a folder through the format prompt with every archive format', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('photos');
      fireEvent.click(screen.getByRole('button', { name: 'Download 1' }));
      const dialog = await screen.findByRole('dialog', { name: 'Download' });
      expect(
        within(dialog)
          .getAllByRole('button')
          .map((button) => button.textContent),
      ).toEqual([
        'zip',
        'tar',
        'tar.gz',
        'tar.bz2',
        'tar.xz',
        'tar.lz4',
        'tar.sz',
        'tar.br',
        'tar.zst',
        'Cancel',
      ]);
      fireEvent.click(within(dialog).getByRole('button', { name: 'tar.gz' }));
      // Followed by the jobs panel under an id of the page's own.
      expect(anchorClicks).toHaveBeenCalledWith(
        expect.stringMatching(/^\/api\/raw\/docs\/photos\?algo=targz&progress=[0-9a-f]{32}$/),
      );
      const id = anchorClicks.mock.calls[0]![0].split('progress=')[1];
      expect(useJobsStore.getState().jobs).toEqual([
        { id, action: 'archive', label: 'photos', unseen: 0, cancelling: false },
      ]);
    });

    it('downloads several entries as one archive of a files list', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      click('b.txt', { ctrlKey: true });
      fireEvent.click(screen.getByRole('button', { name: 'Download 2' }));
      fireEvent.click(
        within(await screen.findByRole('dialog', { name: 'Download' })).getByRole('button', { name: 'zip' }),
      );
      expect(anchorClicks).toHaveBeenCalledWith(
        expect.stringMatching(
          /^\/api\/raw\/\?files=%252Fdocs%252Fa\.txt,%252Fdocs%252Fb\.txt&algo=zip&progress=[0-9a-f]{32}$/,
        ),
      );
      expect(useJobsStore.getState().jobs[0]?.label).toBe('2 items');
    });

    it('shows facts and checksums on demand in the info prompt', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('GET', /^\/api\/resources\/docs\/b\.txt\?checksum=sha256$/, {
        ...entry('/docs/b.txt', false, 1536),
        checksums: { sha256: 'abc123' },
      });
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'b.txt' });
      click('b.txt');
      fireEvent.click(screen.getByRole('button', { name: 'Info' }));
      const dialog = await screen.findByRole('dialog', { name: 'File information' });
      expect(within(dialog).getByText('b.txt')).toBeTruthy();
      expect(within(dialog).getByText(/^1\.5 KiB \(1,?536 bytes\)$/)).toBeTruthy();
      expect(within(dialog).getByText('Text')).toBeTruthy();
      fireEvent.click(within(dialog).getByRole('button', { name: 'Show the SHA256 checksum' }));
      expect(await within(dialog).findByText('abc123')).toBeTruthy();
      expect(sent('GET').at(-1)?.url).toBe('/api/resources/docs/b.txt?checksum=sha256');
    });

    it('describes the folder itself when nothing is selected', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      fireEvent.click(screen.getByRole('button', { name: 'Info' }));
      const dialog = await screen.findByRole('dialog', { name: 'File information' });
      expect(within(dialog).getByText('Folder')).toBeTruthy();
      expect(within(dialog).getByText('Number of files').nextElementSibling?.textContent).toBe('4');
      expect(within(dialog).getByText('Number of folders').nextElementSibling?.textContent).toBe('1');
    });

    it('moves into a folder picked in the dialog; Move is off for the current folder', async () => {
      on('GET', '/api/resources/docs/', docs());
      on('GET', '/api/resources/docs/photos/', folder('/docs/photos/', []));
      on('POST', '/api/jobs', { id: 'job-move-2' }, 202);
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'a.txt' });
      click('a.txt');
      fireEvent.click(screen.getByRole('button', { name: 'Move file' }));
      const dialog = await screen.findByRole('dialog', { name: 'Move' });
      const move = within(dialog).getByRole('button', { name: 'Move' }) as HTMLButtonElement;
      await within(dialog).findByRole('button', { name: /photos/ });
      expect(move.disabled).toBe(true);
      fireEvent.click(within(dialog).getByRole('button', { name: /photos/ }));
      await within(dialog).findByText('No folders in here.');
      expect(move.disabled).toBe(false);
      fireEvent.click(move);
      await waitFor(() => expect(sent('POST')).toHaveLength(1));
      expect(JSON.parse(sent('POST')[0]!.body!)).toMatchObject({
        action: 'rename',
        items: ['/docs/a.txt'],
        destination: '/docs/photos',
      });
      await waitFor(() => expect(useJobsStore.getState().jobs[0]?.label).toBe('a.txt'));
    });

    it('cannot move a folder into itself', async () => {
      on('GET', '/api/resources/docs/', docs());
      await open('/files/docs/');
      await screen.findByRole('link', { name: 'photos' });
      click('photos');
      fireEvent.click(screen.getByRole('button', { name: 'Copy file' }));
      const dialog = await screen.findByRole('dialog', { name: 'Copy' });
      const entryButton = await within(dialog).findByRole('button', { name: /photos/ });
      expect((entryButton as HTMLButtonElement).disabled).toBe(true);
    });
  });
});
