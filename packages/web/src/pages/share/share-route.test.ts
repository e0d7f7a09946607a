import { describe, expect, it } from 'vitest';
import { parseShareSplat, shareRoute } from './share-route';

describe('parseShareSplat', () => {
  it('splits the hash from the path below the share', () => {
    expect(parseShareSplat('abc')).toEqual({ hash: 'abc', path: '/' });
    expect(parseShareSplat('abc/')).toEqual({ hash: 'abc', path: '/' });
    expect(parseShareSplat('abc/sub/dir/')).toEqual({ hash: 'abc', path: '/sub/dir/' });
    expect(parseShareSplat('abc/a b.txt')).toEqual({ hash: 'abc', path: '/a b.txt' });
    expect(parseShareSplat(undefined)).toEqual({ hash: '', path: '/' });
  });
});

describe('shareRoute', () => {
  it('encodes each segment and marks folders with a slash', () => {
    expect(shareRoute('abc', '/sub', true)).toBe('/share/abc/sub/');
    expect(shareRoute('abc', '/a b#.txt', false)).toBe('/share/abc/a%20b%23.txt');
    expect(shareRoute('abc', '/', true)).toBe('/share/abc/');
  });
});
