import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import type { FileInfo } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { connectSession } from '../../api/client';
import { useAuthStore } from '../../stores/auth';
import { useLayoutStore } from '../../stores/layout';
import { configureUploads, useUploadStore, type UploadTask } from '../../stores/upload';
import { tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { PromptHost } from '../prompts/PromptHost';
import { useFileActions } from '../../pages/files/file-actions';
import { ActionButton } from '../../pages/files/FilesHeader';
import { useFilesStore } from '../../stores/files';
import { UploadDropZone } from './UploadDropZone';

/** The file browser's upload action for the folder `/docs/`, as its action bar shows it. */
function UploadButton() {
  const upload = useFileActions().general.find((action) => action.id === 'upload');
  return upload ? <ActionButton action={upload} /> : null;
}

/** What reached the queue, in order; transfers stay pending so the batch stays open. */
let queued: UploadTask[];

function pickFiles(input: HTMLInputElement, files: File[]) {
  Object.defineProperty(input, 'files', { value: files, configurable: true });
  fireEvent.change(input);
}

/** A drop from the desktop, as a file manager delivers it (files without entries suffice here). */
function dropData(files: File[], types = ['Files']) {
  return {
    types,
    files,
    items: files.map((file) => ({ kind: 'file', webkitGetAsEntry: () => null, getAsFile: () => file })),
    dropEffect: 'none',
  };
}

const existing = [
  { name: 'a.txt', isDir: false },
  { name: 'a(1).txt', isDir: false },
];

describe('upload prompt, replace prompt and drop zone', () => {
  beforeEach(() => {
    queued = [];
    configureUploads({
      transport: (task) => {
        queued.push(task);
        return { done: new Promise(() => undefined), abort: () => undefined };
      },
      limit: () => 10,
      onSettled: () => undefined,
    });
    useLayoutStore.setState({ prompts: [] });
    useAuthStore.setState({ user: tokenUser({ create: true }) });
    // The folder on screen; the clash check only reads its entries' names and kinds.
    useFilesStore.setState({
      listing: { path: '/docs/', isDir: true, items: existing } as unknown as FileInfo,
    });
  });
  afterEach(() => {
    cleanup();
    useUploadStore.getState().abort();
    configureUploads();
    useAuthStore.setState({ user: null });
    vi.unstubAllGlobals();
  });

  async function openPrompt() {
    await renderWithApp(
      <>
        <UploadButton />
        <PromptHost />
      </>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    const dialog = screen.getByRole('dialog', { name: 'Upload' });
    expect(screen.getByRole('button', { name: 'File' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Folder' })).toBeTruthy();
    return dialog;
  }

  it('offers a file and a folder picker; the folder one picks directories', async () => {
    const dialog = await openPrompt();
    const folder = dialog.querySelector<HTMLInputElement>('input[data-upload-input="folder"]');
    expect(folder?.hasAttribute('webkitdirectory')).toBe(true);
    expect(dialog.querySelector('input[data-upload-input="files"]')?.hasAttribute('webkitdirectory')).toBe(
      false,
    );
  });

  it('queues picked files without a question when nothing clashes', async () => {
    const dialog = await openPrompt();
    await act(async () => {
      pickFiles(dialog.querySelector('input[data-upload-input="files"]')!, [new File(['12345'], 'new.txt')]);
    });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(queued).toMatchObject([{ path: '/docs/new.txt', name: 'new.txt', size: 5, override: false }]);
  });

  it('asks about clashes: keep both uploads under a free name', async () => {
    const dialog = await openPrompt();
    await act(async () => {
      pickFiles(dialog.querySelector('input[data-upload-input="files"]')!, [
        new File(['x'], 'a.txt'),
        new File(['y'], 'b.txt'),
      ]);
    });
    const replace = screen.getByRole('dialog', { name: 'Replace' });
    expect(replace.querySelector('li')?.textContent).toBe('a.txt');
    expect(queued).toEqual([]);
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Keep both' }));
    });
    expect(queued.map((task) => [task.path, task.override])).toEqual([
      ['/docs/a(2).txt', false],
      ['/docs/b.txt', false],
    ]);
  });

  it('asks about clashes: replace overwrites only the clashing file', async () => {
    const dialog = await openPrompt();
    await act(async () => {
      pickFiles(dialog.querySelector('input[data-upload-input="files"]')!, [
        new File(['x'], 'a.txt'),
        new File(['y'], 'b.txt'),
      ]);
    });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Replace' }));
    });
    expect(queued.map((task) => [task.path, task.override])).toEqual([
      ['/docs/a.txt', true],
      ['/docs/b.txt', false],
    ]);
  });

  it('uploads nothing when the clash question is cancelled', async () => {
    const dialog = await openPrompt();
    await act(async () => {
      pickFiles(dialog.querySelector('input[data-upload-input="files"]')!, [new File(['x'], 'a.txt')]);
    });
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(queued).toEqual([]);
  });

  it('has no upload button without the create permission', async () => {
    useAuthStore.setState({ user: tokenUser({ create: false }) });
    await renderWithApp(<UploadButton />);
    expect(screen.queryByRole('button', { name: 'Upload' })).toBeNull();
  });

  it('takes files dropped from the desktop, showing itself as the target while they hover', async () => {
    await renderWithApp(
      <UploadDropZone base="/docs/" items={existing}>
        <p>listing</p>
      </UploadDropZone>,
    );
    const zone = screen.getByText('listing').parentElement!;
    const data = dropData([new File(['abc'], 'dropped.txt')]);
    fireEvent.dragEnter(zone, { dataTransfer: data });
    expect(screen.getByText('Drop to upload here')).toBeTruthy();
    fireEvent.dragOver(zone, { dataTransfer: data });
    await act(async () => {
      fireEvent.drop(zone, { dataTransfer: data });
    });
    expect(screen.queryByText('Drop to upload here')).toBeNull();
    expect(queued).toMatchObject([{ path: '/docs/dropped.txt', size: 3 }]);
  });

  it('uploads a drop onto a marked folder into that folder, checking its own listing', async () => {
    const fetchMock = vi.fn<typeof fetch>(() =>
      Promise.resolve(
        new Response(
          JSON.stringify({ path: '/docs/sub/', isDir: true, items: [{ name: 'x.txt', isDir: false }] }),
        ),
      ),
    );
    vi.stubGlobal('fetch', fetchMock);
    connectSession({
      token: () => 'tok',
      settled: () => Promise.resolve(),
      onRenewRequested: () => undefined,
      onUnauthorized: () => undefined,
    });
    await renderWithApp(
      <>
        <UploadDropZone base="/docs/" items={existing}>
          <div data-upload-folder="/docs/sub/">
            <span>sub</span>
          </div>
        </UploadDropZone>
        <PromptHost />
      </>,
    );
    await act(async () => {
      fireEvent.drop(screen.getByText('sub'), { dataTransfer: dropData([new File(['1'], 'x.txt')]) });
    });
    expect(String(fetchMock.mock.calls[0]![0])).toBe('/api/resources/docs/sub/');
    expect(queued).toEqual([]);
    // x.txt exists in sub (and not in /docs/): the question comes first, about sub's listing.
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Keep both' }));
    });
    expect(queued).toMatchObject([{ path: '/docs/sub/x(1).txt', override: false }]);
  });

  it('keeps the browser from opening a file dropped beside the zone', async () => {
    await renderWithApp(
      <UploadDropZone base="/docs/">
        <p>listing</p>
      </UploadDropZone>,
    );
    const drop = (types: string[]) => {
      const event = new Event('drop', { bubbles: true, cancelable: true });
      Object.defineProperty(event, 'dataTransfer', { value: dropData([], types) });
      document.body.dispatchEvent(event);
      return event.defaultPrevented;
    };
    expect(drop(['Files'])).toBe(true);
    expect(drop(['text/plain'])).toBe(false);
    expect(queued).toEqual([]);
  });

  it('ignores drags that carry no files, and everything without the create permission', async () => {
    await renderWithApp(
      <UploadDropZone base="/docs/">
        <p>listing</p>
      </UploadDropZone>,
    );
    const zone = screen.getByText('listing').parentElement!;
    fireEvent.dragEnter(zone, { dataTransfer: dropData([], ['text/plain']) });
    expect(screen.queryByText('Drop to upload here')).toBeNull();
    cleanup();

    useAuthStore.setState({ user: tokenUser({ create: false }) });
    await renderWithApp(
      <UploadDropZone base="/docs/">
        <p>listing</p>
      </UploadDropZone>,
    );
    const data = dropData([new File(['abc'], 'dropped.txt')]);
    fireEvent.dragEnter(screen.getByText('listing').parentElement!, { dataTransfer: data });
    expect(screen.queryByText('Drop to upload here')).toBeNull();
    await act(async () => {
      fireEvent.drop(screen.getByText('listing').parentElement!, { dataTransfer: data });
    });
    expect(queued).toEqual([]);
  });
});
