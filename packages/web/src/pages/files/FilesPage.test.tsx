import { TEXT_CONTENT_LIMIT } from '@filebrowser/contract';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { tokenUser } from '../../test/fixtures';
import {
  useFilesPageHarness,
  entry,
  folder,
  ALL,
  docs,
  open,
  fetchMock,
  calls,
  on,
  click,
  selected,
} from './files-page-harness.jsx';

/**
 * FilesPage: the listing and selecting in it. The keys are in FilesPage.keyboard.test.tsx, the
 * actions in FilesPage.actions.test.tsx.
 */
describe('FilesPage', () => {
  useFilesPageHarness();

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
});
