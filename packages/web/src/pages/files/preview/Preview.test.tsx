/**
 * happy-dom would load the PDF frame's address over the network otherwise.
 * @vitest-environment-options {"settings": {"navigation": {"disableChildFrameNavigation": true}}}
 */
import type { FileInfo, Permissions } from '@filebrowser/contract';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { Route, Routes, useLocation } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PromptHost } from '../../../components/prompts/PromptHost';
import { useAuthStore } from '../../../stores/auth';
import { useLayoutStore } from '../../../stores/layout';
import { tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { Preview } from './Preview';
import { forgetFolderItems } from './use-folder-items';

const MODIFIED = '2025-03-01T10:20:30Z';
const KEY = Date.parse(MODIFIED);

function file(path: string, type: string, extra: Partial<FileInfo> = {}): FileInfo {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return {
    path,
    name,
    size: 2048,
    extension: name.includes('.') ? name.slice(name.lastIndexOf('.')) : '',
    modified: MODIFIED,
    mode: 420,
    isDir: false,
    isSymlink: false,
    type,
    ...extra,
  };
}

const folder: FileInfo = {
  ...file('/pics', ''),
  isDir: true,
  items: [
    file('/pics/a.jpg', 'image'),
    file('/pics/notes.txt', 'text'),
    file('/pics/b.png', 'image'),
    file('/pics/c.mp4', 'video'),
  ],
};

function Where() {
  return <output aria-label="location">{useLocation().pathname}</output>;
}

const where = () => screen.getByRole('status', { name: 'location' }).textContent;

describe('Preview', () => {
  const fetchMock = vi.fn<typeof fetch>();

  beforeEach(() => {
    forgetFolderItems();
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockImplementation(() => Promise.resolve(new Response(JSON.stringify(folder))));
    useLayoutStore.setState({ prompts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  async function show(shown: FileInfo, perm: Partial<Permissions> = { download: true }, withPrompts = false) {
    useAuthStore.setState({ user: tokenUser(perm), jwt: 'a.b.c' });
    await renderWithApp(
      <>
        <Routes>
          <Route path="/files/*" element={<Preview file={shown} />} />
        </Routes>
        <Where />
        {withPrompts && <PromptHost />}
      </>,
      { route: `/files${shown.path}` },
    );
  }

  it('shows the screen-sized image, a link to the original and a download link', async () => {
    await show(file('/pics/b.png', 'image'));
    // Hidden until it has loaded and been measured, so found by its text alternative.
    const image = screen.getByAltText('b.png');
    expect(image.getAttribute('src')).toBe(`/api/preview/big/pics/b.png?inline=true&key=${KEY}`);
    expect(screen.getByRole('link', { name: 'Open the original' }).getAttribute('href')).toBe(
      '/api/raw/pics/b.png?inline=true',
    );
    expect(screen.getByRole('link', { name: 'Download' }).getAttribute('href')).toBe('/api/raw/pics/b.png');
  });

  it('falls back to the original when the screen-sized image fails', async () => {
    await show(file('/pics/b.png', 'image'));
    fireEvent.error(screen.getByAltText('b.png'));
    expect(screen.getByAltText('b.png').getAttribute('src')).toBe('/api/raw/pics/b.png?inline=true');
    fireEvent.error(screen.getByAltText('b.png'));
    expect(screen.getByText("This file can't be shown.")).toBeTruthy();
  });

  it('steps through the folder with the buttons and the arrow keys, skipping text files', async () => {
    await show(file('/pics/b.png', 'image'));
    expect(fetchMock.mock.calls[0]?.[0]).toBe('/api/resources/pics/');
    const previous = await screen.findByRole('button', { name: 'Previous' });
    expect(screen.getByRole('button', { name: 'Next' })).toBeTruthy();

    fireEvent.keyDown(window, { key: 'ArrowRight' });
    expect(where()).toBe('/files/pics/c.mp4');
    fireEvent.keyDown(window, { key: 'ArrowLeft' });
    expect(where()).toBe('/files/pics/a.jpg');
    fireEvent.click(previous);
    expect(where()).toBe('/files/pics/a.jpg');
  });

  it('offers no previous step at the start of the folder', async () => {
    await show(file('/pics/a.jpg', 'image'));
    await screen.findByRole('button', { name: 'Next' });
    expect(screen.queryByRole('button', { name: 'Previous' })).toBeNull();
    fireEvent.keyDown(window, { key: 'ArrowLeft' });
    expect(where()).toBe('/files/pics/a.jpg');
  });

  it('goes back to the folder on Escape', async () => {
    await show(file('/pics/b.png', 'image'));
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(where()).toBe('/files/pics/');
  });

  it('goes back to the folder with the close button', async () => {
    await show(file('/pics/b.png', 'image'));
    fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    expect(where()).toBe('/files/pics/');
  });

  it('leaves the keys to an open prompt', async () => {
    await show(file('/pics/b.png', 'image'));
    await screen.findByRole('button', { name: 'Next' });
    useLayoutStore.getState().openPrompt('help', {});
    fireEvent.keyDown(window, { key: 'Escape' });
    fireEvent.keyDown(window, { key: 'ArrowRight' });
    expect(where()).toBe('/files/pics/b.png');
  });

  it('plays a video with its subtitles as tracks', async () => {
    await show(file('/pics/c.mp4', 'video', { subtitles: ['/pics/c.en.vtt', '/pics/subs/c fr.srt'] }));
    const container = document.body;
    const video = container.querySelector('video');
    expect(video?.getAttribute('src')).toBe('/api/raw/pics/c.mp4?inline=true');
    const tracks = [...container.querySelectorAll('track')];
    expect(tracks.map((track) => track.getAttribute('src'))).toEqual([
      '/api/subtitle/pics/c.en.vtt?inline=true',
      '/api/subtitle/pics/subs/c%20fr.srt?inline=true',
    ]);
    expect(tracks.map((track) => track.getAttribute('label'))).toEqual(['c.en.vtt', 'c fr.srt']);
    expect(tracks[0]?.hasAttribute('default')).toBe(true);
  });

  it('plays audio', async () => {
    await show(file('/pics/song.mp3', 'audio'));
    expect(document.querySelector('audio')?.getAttribute('src')).toBe('/api/raw/pics/song.mp3?inline=true');
  });

  it("shows a PDF in the browser's viewer", async () => {
    await show(file('/pics/paper.pdf', 'pdf'));
    expect(screen.getByTitle('PDF document paper.pdf').getAttribute('src')).toBe(
      '/api/raw/pics/paper.pdf?inline=true',
    );
  });

  it('offers a download for other files', async () => {
    await show(file('/pics/data.bin', 'blob'));
    expect(screen.getByText(/No preview available/)).toBeTruthy();
    const downloads = screen.getAllByRole('link', { name: /Download/ });
    expect(downloads.map((link) => link.getAttribute('href'))).toEqual([
      '/api/raw/pics/data.bin',
      '/api/raw/pics/data.bin',
    ]);
  });

  it('shows neither the file nor a download without the download permission', async () => {
    await show(file('/pics/b.png', 'image'), {});
    expect(screen.queryByAltText('b.png')).toBeNull();
    expect(screen.queryByRole('link', { name: /Download/ })).toBeNull();
    expect(screen.getByText(/No preview available/)).toBeTruthy();
  });

  it('opens the share prompt for the file with share and download, and offers no share otherwise', async () => {
    await show(file('/pics/b.png', 'image'), { download: true, share: true });
    fireEvent.click(screen.getByRole('button', { name: 'Share' }));
    expect(useLayoutStore.getState().prompts.map((p) => [p.name, p.props])).toEqual([
      ['share', { path: '/pics/b.png' }],
    ]);
    cleanup();
    await show(file('/pics/b.png', 'image'), { share: true });
    expect(screen.queryByRole('button', { name: 'Share' })).toBeNull();
  });

  describe('bar', () => {
    const ALL = { download: true, rename: true, delete: true };
    const prompts = () => useLayoutStore.getState().prompts.map((prompt) => prompt.name);
    const closePrompts = () => useLayoutStore.setState({ prompts: [] });

    it('opens the info, rename and delete prompts of the listing for the file', async () => {
      const shown = file('/pics/b.png', 'image');
      await show(shown, ALL, true);
      fireEvent.click(screen.getByRole('button', { name: 'Info' }));
      expect(useLayoutStore.getState().prompts[0]?.props).toEqual({ items: [shown] });
      expect(await screen.findByRole('dialog', { name: 'File information' })).toBeTruthy();
      closePrompts();
      fireEvent.click(screen.getByRole('button', { name: 'Rename' }));
      expect(prompts()).toEqual(['rename']);
      expect(await screen.findByRole('textbox')).toHaveProperty('value', 'b.png');
      closePrompts();
      fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
      expect(prompts()).toEqual(['delete']);
    });

    it('opens the same prompts with F2, Delete and I', async () => {
      await show(file('/pics/b.png', 'image'), ALL, true);
      fireEvent.keyDown(window, { key: 'F2' });
      expect(prompts()).toEqual(['rename']);
      closePrompts();
      fireEvent.keyDown(window, { key: 'Delete' });
      expect(prompts()).toEqual(['delete']);
      closePrompts();
      fireEvent.keyDown(window, { key: 'i' });
      expect(prompts()).toEqual(['info']);
    });

    it('offers no rename or delete, by button or key, without those permissions', async () => {
      await show(file('/pics/b.png', 'image'), { download: true });
      expect(screen.queryByRole('button', { name: 'Rename' })).toBeNull();
      expect(screen.queryByRole('button', { name: 'Delete' })).toBeNull();
      expect(screen.getByRole('button', { name: 'Info' })).toBeTruthy();
      fireEvent.keyDown(window, { key: 'F2' });
      fireEvent.keyDown(window, { key: 'Delete' });
      expect(prompts()).toEqual([]);
    });

    it('offers no download and no full size without the download permission', async () => {
      await show(file('/pics/b.png', 'image'), { rename: true, delete: true });
      expect(screen.queryByRole('link', { name: 'Download' })).toBeNull();
      expect(screen.queryByRole('button', { name: 'Full size' })).toBeNull();
      fireEvent.keyDown(window, { key: 'f' });
      expect(screen.queryByAltText('b.png')).toBeNull();
    });

    it('switches an image between fitted and full size with the button and F, showing the original', async () => {
      await show(file('/pics/b.png', 'image'), ALL, true);
      const toggle = screen.getByRole('button', { name: 'Full size' });
      expect(toggle.getAttribute('aria-pressed')).toBe('false');
      fireEvent.load(screen.getByAltText('b.png'));
      fireEvent.click(toggle);
      expect(toggle.getAttribute('aria-pressed')).toBe('true');
      await waitFor(() =>
        expect(screen.getByAltText('b.png').getAttribute('src')).toBe('/api/raw/pics/b.png?inline=true'),
      );
      fireEvent.keyDown(window, { key: 'f' });
      expect(toggle.getAttribute('aria-pressed')).toBe('false');
      fireEvent.keyDown(window, { key: 'F' });
      expect(toggle.getAttribute('aria-pressed')).toBe('true');
      // Back to fitting by the viewer's own key leaves full size too.
      fireEvent.keyDown(window, { key: '0' });
      expect(toggle.getAttribute('aria-pressed')).toBe('false');
    });

    it('has no full size toggle for what is not an image', async () => {
      await show(file('/pics/c.mp4', 'video'), ALL, true);
      expect(screen.queryByRole('button', { name: 'Full size' })).toBeNull();
    });

    it('follows the file to its new name after a rename', async () => {
      await show(file('/pics/b.png', 'image'), ALL, true);
      fireEvent.keyDown(window, { key: 'F2' });
      fireEvent.change(await screen.findByRole('textbox'), { target: { value: 'renamed.png' } });
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Rename' }));
      await waitFor(() => expect(where()).toBe('/files/pics/renamed.png'));
      const rename = fetchMock.mock.calls.find(([, init]) => init?.method === 'PATCH');
      expect(rename?.[0]).toBe(
        '/api/resources/pics/b.png?action=rename&destination=%2Fpics%2Frenamed.png&override=false&rename=false',
      );
    });

    it('goes on to the next file after a delete', async () => {
      await show(file('/pics/b.png', 'image'), ALL, true);
      await screen.findByRole('button', { name: 'Next' });
      fireEvent.keyDown(window, { key: 'Delete' });
      fireEvent.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Delete' }));
      await waitFor(() => expect(where()).toBe('/files/pics/c.mp4'));
      const removal = fetchMock.mock.calls.find(([, init]) => init?.method === 'DELETE');
      expect(removal?.[0]).toBe('/api/resources/pics/b.png');
    });

    it('goes to the previous file after deleting the last one', async () => {
      await show(file('/pics/c.mp4', 'video'), ALL, true);
      await screen.findByRole('button', { name: 'Previous' });
      fireEvent.keyDown(window, { key: 'Delete' });
      fireEvent.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Delete' }));
      await waitFor(() => expect(where()).toBe('/files/pics/b.png'));
    });

    it('goes back to the folder after deleting its only file', async () => {
      fetchMock.mockImplementation(() =>
        Promise.resolve(new Response(JSON.stringify({ ...folder, items: [file('/pics/b.png', 'image')] }))),
      );
      await show(file('/pics/b.png', 'image'), ALL, true);
      await waitFor(() => expect(fetchMock).toHaveBeenCalled());
      fireEvent.keyDown(window, { key: 'Delete' });
      fireEvent.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Delete' }));
      await waitFor(() => expect(where()).toBe('/files/pics/'));
    });
  });
});
