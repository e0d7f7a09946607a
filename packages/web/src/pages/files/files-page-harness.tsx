import { type FileInfo, type Permissions } from '@filebrowser/contract';
import { act, cleanup, fireEvent } from '@testing-library/react';
import { Route, Routes, useLocation } from 'react-router';
import { afterEach, beforeEach, vi } from 'vitest';
import { Header } from '../../components/layout/Header';
import { useAuthStore } from '../../stores/auth';
import { useClipboardStore } from '../../stores/clipboard';
import { useFilesStore } from '../../stores/files';
import { useJobsStore } from '../../stores/jobs';
import { useLayoutStore } from '../../stores/layout';
import { useToastStore } from '../../stores/toasts';
import { tokenUser } from '../../test/fixtures';
import { PromptHost } from '../../components/prompts/PromptHost';
import { renderWithApp } from '../../test/render';
import { EMPTY_SELECTION } from '../../utils/selection';
import { FilesPage } from './FilesPage';

/**
 * What the FilesPage tests share: listings to answer with, the page rendered with the header and
 * prompts, a fetch that answers from routes the test sets, and the clicks and keys a user makes.
 */

export const entry = (path: string, isDir: boolean, size = 0): FileInfo => ({
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

export const folder = (path: string, items: FileInfo[], sorting = { by: 'name', asc: false }): FileInfo => ({
  ...entry(path, true, 4096),
  items,
  numDirs: items.filter((item) => item.isDir).length,
  numFiles: items.filter((item) => !item.isDir).length,
  sorting,
});

export const ALL: Partial<Permissions> = {
  create: true,
  rename: true,
  delete: true,
  download: true,
  modify: true,
};

export const docs = () =>
  folder('/docs/', [
    entry('/docs/photos', true, 4096),
    entry('/docs/a.txt', false, 10),
    entry('/docs/b.txt', false, 1536),
    entry('/docs/c.txt', false, 30),
    entry('/docs/d.txt', false, 40),
  ]);

export function Where() {
  const location = useLocation();
  return <output data-testid="location">{location.pathname}</output>;
}

export async function open(route: string) {
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

export interface Call {
  method: string;
  url: string;
  body: string | null;
}

export const fetchMock = vi.fn<typeof fetch>();
export let calls: Call[] = [];
/** Answers by method and path; the last matching route wins. */
export let routes: { method: string; path: string | RegExp; answer: () => Response }[] = [];
export const on = (method: string, path: string | RegExp, body: unknown, status = 200) =>
  routes.push({
    method,
    path,
    answer: () => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status }),
  });
export const sent = (method: string) => calls.filter((call) => call.method === method);
export const anchorClicks = vi.fn<(href: string) => void>();

export const item = (name: string) => {
  const found = document.querySelector<HTMLElement>(`.item[data-name="${name}"]`);
  if (!found) throw new Error(`no entry ${name}`);
  return found;
};
export const click = (name: string, init: MouseEventInit = {}) =>
  fireEvent.click(item(name), { detail: 1, ...init });
export const selected = () =>
  [...document.querySelectorAll<HTMLElement>('.item[aria-selected="true"]')].map((el) => el.dataset.name);
export const key = (init: KeyboardEventInit) => act(() => void fireEvent.keyDown(window, init));

/**
 * Before each test of the suite that calls it: no calls and no routes, fetch answered from
 * `routes`, anchor clicks recorded, fresh stores; after it, everything restored.
 */
export function useFilesPageHarness(): void {
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
}
