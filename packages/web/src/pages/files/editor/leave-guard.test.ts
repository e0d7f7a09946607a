import { describe, expect, it } from 'vitest';
import { internalRoute } from './leave-guard';

const here = {
  origin: 'https://files.example',
  pathname: '/fb/files/docs/notes.txt',
  search: '',
  hash: '',
};
const click = { button: 0, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false };

function anchor(href: string | null, attributes: Record<string, string> = {}): HTMLAnchorElement {
  const element = document.createElement('a');
  if (href !== null) element.setAttribute('href', href);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  return element;
}

describe('internalRoute', () => {
  it('gives the route of a link inside the app, without the base URL', () => {
    expect(internalRoute(anchor('/fb/files/docs/'), click, here, '/fb')).toBe('/files/docs/');
    expect(internalRoute(anchor('/fb/settings/profile?x=1#top'), click, here, '/fb')).toBe(
      '/settings/profile?x=1#top',
    );
    expect(internalRoute(anchor('/files/'), click, { ...here, pathname: '/files/a.txt' }, '')).toBe(
      '/files/',
    );
  });

  it('resolves relative links against the current page', () => {
    expect(internalRoute(anchor('other.txt'), click, here, '/fb')).toBe('/files/docs/other.txt');
  });

  it('ignores clicks that do not leave the page in this tab', () => {
    expect(internalRoute(anchor('/fb/files/'), { ...click, ctrlKey: true }, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('/fb/files/'), { ...click, metaKey: true }, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('/fb/files/'), { ...click, shiftKey: true }, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('/fb/files/'), { ...click, button: 1 }, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('/fb/files/', { target: '_blank' }), click, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('/fb/api/raw/a.txt', { download: '' }), click, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('#section'), click, here, '/fb')).toBeNull();
    expect(internalRoute(anchor(null), click, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('/fb/files/docs/notes.txt'), click, here, '/fb')).toBeNull();
  });

  it('ignores links to other sites and outside the base URL', () => {
    expect(internalRoute(anchor('https://github.com/x'), click, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('/other-app/'), click, here, '/fb')).toBeNull();
    expect(internalRoute(anchor('/fbx/files/'), click, here, '/fb')).toBeNull();
  });
});
