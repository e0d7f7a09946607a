import type { FileInfo, Permissions } from '@filebrowser/contract';
import { EditorView } from '@codemirror/view';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { Link, Route, Routes, useLocation } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PromptHost } from '../../../components/prompts/PromptHost';
import { useAuthStore } from '../../../stores/auth';
import { useLayoutStore } from '../../../stores/layout';
import { useToastStore } from '../../../stores/toasts';
import { tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { Editor, isReadOnly } from './Editor';

const notes: FileInfo = {
  path: '/docs/notes.txt',
  name: 'notes.txt',
  size: 5,
  extension: '.txt',
  modified: '2025-03-01T10:20:30Z',
  mode: 420,
  isDir: false,
  isSymlink: false,
  type: 'text',
  content: 'hello',
};

function Where() {
  const location = useLocation();
  return <output aria-label="location">{location.pathname}</output>;
}

async function renderEditor(
  file: FileInfo = notes,
  perm: Partial<Permissions> = { download: true, modify: true },
) {
  useAuthStore.setState({ user: tokenUser(perm), jwt: 'a.b.c' });
  await renderWithApp(
    <>
      <Routes>
        <Route
          path="/files/*"
          element={
            <>
              <Link to="/files/elsewhere/">elsewhere</Link>
              <Editor file={file} />
            </>
          }
        />
      </Routes>
      <Where />
      <PromptHost />
    </>,
    { route: `/files${file.path}` },
  );
  const content = screen.getByRole('textbox', { name: `Contents of ${file.name}` });
  const view = EditorView.findFromDOM(content);
  if (!view) throw new Error('no editor view');
  return view;
}

function type(view: EditorView, text: string) {
  act(() => view.dispatch({ changes: { from: view.state.doc.length, insert: text } }));
}

const where = () => screen.getByRole('status', { name: 'location' }).textContent;

describe('Editor', () => {
  const fetchMock = vi.fn<typeof fetch>();

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useLayoutStore.setState({ prompts: [] });
    useToastStore.setState({ toasts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('saves with Ctrl+S: PUT of the whole text, then a success toast', async () => {
    fetchMock.mockResolvedValue(new Response('200 OK\n', { status: 200 }));
    const view = await renderEditor();
    expect(screen.queryByText('Unsaved changes')).toBeNull();
    type(view, ' world');
    expect(screen.getByText('Unsaved changes')).toBeTruthy();

    await act(async () => {
      fireEvent.keyDown(window, { key: 's', ctrlKey: true });
    });
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/resources/docs/notes.txt');
    expect(init?.method).toBe('PUT');
    expect(init?.body).toBe('hello world');
    expect(useToastStore.getState().toasts.map((toast) => toast.message)).toEqual(['File saved!']);
    expect(screen.queryByText('Unsaved changes')).toBeNull();
  });

  it('saves with Cmd+S and with the button', async () => {
    fetchMock.mockImplementation(() => Promise.resolve(new Response('200 OK\n', { status: 200 })));
    const view = await renderEditor();
    type(view, '!');
    await act(async () => {
      fireEvent.keyDown(window, { key: 's', metaKey: true });
    });
    type(view, '?');
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /Save/ }));
    });
    expect(fetchMock.mock.calls.map(([, init]) => init?.body)).toEqual(['hello!', 'hello!?']);
  });

  it('keeps the changes and shows the error when saving fails', async () => {
    fetchMock.mockResolvedValue(new Response('403 Forbidden\n', { status: 403 }));
    const view = await renderEditor();
    type(view, ' world');
    await act(async () => {
      fireEvent.keyDown(window, { key: 's', ctrlKey: true });
    });
    expect(useToastStore.getState().toasts).toEqual([
      expect.objectContaining({ kind: 'error', message: '403 Forbidden' }),
    ]);
    expect(screen.getByText('Unsaved changes')).toBeTruthy();
  });

  it('closes straight to the folder when nothing changed', async () => {
    await renderEditor();
    fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(where()).toBe('/files/docs/');
  });

  it('asks before closing with unsaved changes; discarding leaves for the folder without saving', async () => {
    const view = await renderEditor();
    type(view, ' world');
    fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    expect(screen.getByRole('dialog', { name: 'Discard changes?' })).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(where()).toBe('/files/docs/notes.txt');

    fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    fireEvent.click(screen.getByRole('button', { name: 'Discard changes' }));
    expect(where()).toBe('/files/docs/');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('holds back a link inside the app while changes are unsaved', async () => {
    const view = await renderEditor();
    type(view, ' world');
    fireEvent.click(screen.getByRole('link', { name: 'elsewhere' }));
    expect(where()).toBe('/files/docs/notes.txt');
    fireEvent.click(screen.getByRole('button', { name: 'Discard changes' }));
    expect(where()).toBe('/files/elsewhere/');
  });

  it('lets links through once the changes are saved', async () => {
    fetchMock.mockResolvedValue(new Response('200 OK\n', { status: 200 }));
    const view = await renderEditor();
    type(view, ' world');
    await act(async () => {
      fireEvent.keyDown(window, { key: 's', ctrlKey: true });
    });
    fireEvent.click(screen.getByRole('link', { name: 'elsewhere' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(where()).toBe('/files/elsewhere/');
  });

  it('is read-only without the modify permission, and Ctrl+S sends nothing', async () => {
    const view = await renderEditor(notes, { download: true });
    expect(view.state.readOnly).toBe(true);
    expect(screen.getByText('Read-only')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /Save/ })).toBeNull();
    await act(async () => {
      fireEvent.keyDown(window, { key: 's', ctrlKey: true });
    });
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe('isReadOnly', () => {
  it('is read-only for textImmutable, without modify, and without the content', () => {
    expect(isReadOnly({ type: 'text', content: 'a', size: 1 }, true)).toBe(false);
    expect(isReadOnly({ type: 'text', content: '', size: 0 }, true)).toBe(false);
    expect(isReadOnly({ type: 'text', size: 0 }, true)).toBe(false);
    expect(isReadOnly({ type: 'textImmutable', content: 'a', size: 1 }, true)).toBe(true);
    expect(isReadOnly({ type: 'text', content: 'a', size: 1 }, false)).toBe(true);
    // A non-empty file whose text the server did not send must never be saved over.
    expect(isReadOnly({ type: 'text', size: 12 }, true)).toBe(true);
  });
});
