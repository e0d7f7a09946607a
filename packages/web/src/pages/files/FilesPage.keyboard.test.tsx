import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { useClipboardStore } from '../../stores/clipboard';
import { useFilesStore } from '../../stores/files';
import { useJobsStore } from '../../stores/jobs';
import { useLayoutStore } from '../../stores/layout';
import { useToastStore } from '../../stores/toasts';
import { tokenUser } from '../../test/fixtures';
import {
  useFilesPageHarness,
  entry,
  folder,
  ALL,
  docs,
  open,
  on,
  sent,
  anchorClicks,
  item,
  click,
  selected,
  key,
} from './files-page-harness.jsx';

/** FilesPage: moving through the listing with the arrow keys, and the keyboard shortcuts. */
describe('FilesPage', () => {
  useFilesPageHarness();

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
});
