import { cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { useLayoutStore } from '../../stores/layout';
import { tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { SearchButton } from './SearchButton';

describe('SearchButton', () => {
  beforeEach(() => {
    useAuthStore.setState({ user: tokenUser(), jwt: 'a.b.c' });
    useLayoutStore.setState({ prompts: [] });
  });
  afterEach(() => {
    cleanup();
    useAuthStore.setState({ user: null, jwt: null });
  });

  it('opens the search over the folder on screen', async () => {
    await renderWithApp(<SearchButton />, { route: '/files/photos/2024/' });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    expect(useLayoutStore.getState().prompts.map((p) => [p.name, p.props])).toEqual([
      ['search', { dir: '/photos/2024/' }],
    ]);
  });

  it('opens with Ctrl+F over the folder of an open file, instead of the browser find bar', async () => {
    await renderWithApp(<SearchButton />, { route: '/files/photos/a%20b.jpg' });
    const event = new KeyboardEvent('keydown', { key: 'f', ctrlKey: true, cancelable: true });
    window.dispatchEvent(event);
    expect(event.defaultPrevented).toBe(true);
    expect(useLayoutStore.getState().prompts.map((p) => p.props)).toEqual([{ dir: '/photos/' }]);
  });

  it('leaves Ctrl+F alone when something handled it already', async () => {
    await renderWithApp(<SearchButton />, { route: '/files/' });
    const event = new KeyboardEvent('keydown', { key: 'f', ctrlKey: true, cancelable: true });
    event.preventDefault();
    window.dispatchEvent(event);
    expect(useLayoutStore.getState().prompts).toEqual([]);
  });

  it('is not there outside the file browser, nor for visitors', async () => {
    await renderWithApp(<SearchButton />, { route: '/settings/profile' });
    expect(screen.queryByRole('button', { name: 'Search' })).toBeNull();
    fireEvent.keyDown(window, { key: 'f', ctrlKey: true });
    expect(useLayoutStore.getState().prompts).toEqual([]);
    cleanup();

    useAuthStore.setState({ user: null, jwt: null });
    await renderWithApp(<SearchButton />, { route: '/files/' });
    expect(screen.queryByRole('button', { name: 'Search' })).toBeNull();
  });
});
