import { describe, expect, it } from 'vitest';
import { buildBreadcrumbs, trimBreadcrumbs } from './breadcrumbs';

describe('buildBreadcrumbs', () => {
  it('gives no crumbs for the root', () => {
    expect(buildBreadcrumbs('/')).toEqual([]);
  });

  it('gives one folder crumb per segment', () => {
    expect(buildBreadcrumbs('/a/b/')).toEqual([
      { name: 'a', path: '/a/' },
      { name: 'b', path: '/a/b/' },
    ]);
  });

  it('keeps a trailing file without a slash', () => {
    expect(buildBreadcrumbs('/docs/readme.md', false)).toEqual([
      { name: 'docs', path: '/docs/' },
      { name: 'readme.md', path: '/docs/readme.md' },
    ]);
  });
});

describe('trimBreadcrumbs', () => {
  it('leaves three segments or fewer alone', () => {
    const crumbs = buildBreadcrumbs('/a/b/c/');
    expect(trimBreadcrumbs(crumbs)).toEqual(crumbs);
  });

  it('keeps the last three segments behind a leading "..." that leads one folder up', () => {
    const trimmed = trimBreadcrumbs(buildBreadcrumbs('/a/b/c/d/e/'));
    expect(trimmed.map((crumb) => crumb.name)).toEqual(['...', 'c', 'd', 'e']);
    expect(trimmed[0]?.path).toBe('/a/b/');
  });

  it('trims a four-segment path to "..." plus three', () => {
    const trimmed = trimBreadcrumbs(buildBreadcrumbs('/one/two/three/four/'));
    expect(trimmed.map((crumb) => crumb.name)).toEqual(['...', 'two', 'three', 'four']);
    expect(trimmed[0]?.path).toBe('/one/');
  });
});
