import { afterEach, describe, expect, it } from 'vitest';
import { useFilesStore } from '../../stores/files';
import { useLayoutStore } from '../../stores/layout';
import { isSearchShortcut, openSearch, searchFolder } from './open-search';

const key = (
  key: string,
  mods: Partial<Record<'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey', boolean>> = {},
) => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  shiftKey: false,
  ...mods,
});

describe('searchFolder', () => {
  it('searches a folder route itself', () => {
    expect(searchFolder('/photos/2024/', null)).toBe('/photos/2024/');
    expect(searchFolder('/', '/other/')).toBe('/');
  });

  it("searches an open file's folder", () => {
    expect(searchFolder('/photos/a.jpg', null)).toBe('/photos/');
    // The folder of the page before is no guide while the file loads.
    expect(searchFolder('/photos/a.jpg', '/docs/')).toBe('/photos/');
  });

  it('searches a folder addressed without its trailing slash once loaded as one', () => {
    expect(searchFolder('/photos', '/photos/')).toBe('/photos/');
    expect(searchFolder('/photos', null)).toBe('/');
  });
});

describe('isSearchShortcut', () => {
  it('is Ctrl+F or Cmd+F, without Shift or Alt', () => {
    expect(isSearchShortcut(key('f', { ctrlKey: true }))).toBe(true);
    expect(isSearchShortcut(key('F', { metaKey: true }))).toBe(true);
    expect(isSearchShortcut(key('f'))).toBe(false);
    expect(isSearchShortcut(key('f', { ctrlKey: true, shiftKey: true }))).toBe(false);
    expect(isSearchShortcut(key('f', { ctrlKey: true, altKey: true }))).toBe(false);
    expect(isSearchShortcut(key('g', { ctrlKey: true }))).toBe(false);
  });
});

describe('openSearch', () => {
  afterEach(() => {
    useLayoutStore.setState({ prompts: [] });
    useFilesStore.setState({ currentFolder: null });
  });

  it('opens the search prompt over the folder', () => {
    expect(openSearch('/photos/')).toBe(true);
    const [prompt] = useLayoutStore.getState().prompts;
    expect(prompt?.name).toBe('search');
    expect(prompt?.props).toEqual({ dir: '/photos/' });
  });

  it('keeps an open search rather than stacking another', () => {
    openSearch('/photos/');
    expect(openSearch('/photos/')).toBe(true);
    expect(useLayoutStore.getState().prompts).toHaveLength(1);
  });

  it('stays out of the way of another prompt', () => {
    useLayoutStore.getState().openPrompt('help', {});
    expect(openSearch('/photos/')).toBe(false);
    expect(useLayoutStore.getState().prompts.map((p) => p.name)).toEqual(['help']);
  });
});
