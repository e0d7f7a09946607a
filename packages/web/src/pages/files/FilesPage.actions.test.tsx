import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { useClipboardStore } from '../../stores/clipboard';
import { useJobsStore } from '../../stores/jobs';
import { tokenUser } from '../../test/fixtures';
import {
  useFilesPageHarness,
  entry,
  folder,
  docs,
  open,
  on,
  sent,
  anchorClicks,
  item,
  click,
  key,
} from './files-page-harness.jsx';

/**
 * FilesPage: sorting and view, the actions a user may take on the selection or the folder (rename,
 * download as an archive, info, move).
 */
describe('FilesPage', () => {
  useFilesPageHarness();

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
