/**
 * happy-dom would load the PDF frame's address over the network otherwise.
 * @vitest-environment-options {"settings": {"navigation": {"disableChildFrameNavigation": true}}}
 */
import type { FileInfo, Permissions } from '@filebrowser/contract';
import { cleanup, fireEvent, screen } from '@testing-library/react';
import { Route, Routes, useLocation } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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

  async function show(shown: FileInfo, perm: Partial<Permissions> = { download: true }) {
    useAuthStore.setState({ user: tokenUser(perm), jwt: 'a.b.c' });
    await renderWithApp(
      <>
        <Routes>
          <Route path="/files/*" element={<Preview file={shown} />} />
        </Routes>
        <Where />
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
});
