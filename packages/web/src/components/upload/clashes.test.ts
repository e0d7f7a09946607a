import { describe, expect, it } from 'vitest';
import {
  findClashes,
  foldersToInspect,
  freeName,
  numberedName,
  planTargets,
  treeFromListing,
} from './clashes';
import type { UploadEntry } from './entries';

const file = (relativePath: string): UploadEntry => ({ relativePath, file: new File(['x'], 'x') });
const folder = (relativePath: string): UploadEntry => ({ relativePath });
const existing = [
  { name: 'a.txt', isDir: false },
  { name: 'photos', isDir: true },
  { name: 'notes', isDir: false },
  { name: 'a(1).txt', isDir: false },
];

describe('names', () => {
  it('numbers names like the server does', () => {
    expect(numberedName('a.txt', 1)).toBe('a(1).txt');
    expect(numberedName('a.tar.gz', 2)).toBe('a.tar(2).gz');
    expect(numberedName('.env', 1)).toBe('(1).env');
    expect(numberedName('dir', 3)).toBe('dir(3)');
  });

  it('finds the first free numbered name', () => {
    expect(freeName('a.txt', new Set(['a.txt']))).toBe('a(1).txt');
    expect(freeName('a.txt', new Set(['a.txt', 'a(1).txt', 'a(2).txt']))).toBe('a(3).txt');
  });
});

describe('findClashes', () => {
  it('reports files whose name is taken, each top-level name once', () => {
    expect(findClashes([file('a.txt'), file('b.txt')], existing)).toEqual([
      { name: 'a.txt', kindMismatch: false },
    ]);
  });

  it('compares the first path segment of dropped folders', () => {
    // A folder called like an existing file cannot merge.
    expect(findClashes([file('notes/today.md'), folder('notes/empty')], existing)).toEqual([
      { name: 'notes', kindMismatch: true },
    ]);
    // A file called like an existing folder cannot replace it.
    expect(findClashes([file('photos')], existing)).toEqual([{ name: 'photos', kindMismatch: true }]);
  });

  it('lets a folder merge into a folder unless something inside would be overwritten', () => {
    const tree = treeFromListing('/docs/', [
      { path: '/docs/photos/2024', isDir: true },
      { path: '/docs/photos/2024/a.jpg', isDir: false },
      { path: '/docs/photos/old', isDir: false },
    ]);
    expect(findClashes([file('photos/2024/b.jpg'), folder('photos/new')], existing, tree)).toEqual([]);
    expect(findClashes([file('photos/2024/a.jpg'), file('photos/2024/b.jpg')], existing, tree)).toEqual([
      { name: 'photos', kindMismatch: false },
    ]);
    // "old" is a file: nothing can go beneath it, and a folder cannot replace it.
    expect(findClashes([file('photos/old/x.jpg')], existing, tree)).toEqual([
      { name: 'photos', kindMismatch: true },
    ]);
    expect(findClashes([folder('photos/old')], existing, tree)).toEqual([
      { name: 'photos', kindMismatch: true },
    ]);
    expect(findClashes([file('photos/2024')], existing, tree)).toEqual([
      { name: 'photos', kindMismatch: true },
    ]);
  });

  it('finds nothing in an empty destination', () => {
    expect(findClashes([file('a.txt'), file('photos/x.jpg')], [])).toEqual([]);
  });
});

describe('foldersToInspect', () => {
  it('lists incoming folders that exist as folders at the destination', () => {
    expect(foldersToInspect([file('photos/a.jpg'), file('a.txt'), file('new/b.txt')], existing)).toEqual([
      'photos',
    ]);
    expect(foldersToInspect([file('notes/a.md')], existing)).toEqual([]);
  });
});

describe('planTargets', () => {
  const entries = [file('a.txt'), file('b.txt'), file('photos/2024/a.jpg')];
  const clashes = [
    { name: 'a.txt', kindMismatch: false },
    { name: 'photos', kindMismatch: false },
  ];

  it('overwrites only the clashing entries on replace', () => {
    const targets = planTargets(entries, clashes, 'replace', existing);
    expect(targets.map((t) => [t.relativePath, t.override])).toEqual([
      ['a.txt', true],
      ['b.txt', false],
      ['photos/2024/a.jpg', true],
    ]);
  });

  it('gives clashing top-level entries free names on keep both', () => {
    const targets = planTargets(entries, clashes, 'keep', existing);
    // a(1).txt exists already, so the new one becomes a(2).txt.
    expect(targets.map((t) => [t.relativePath, t.override])).toEqual([
      ['a(2).txt', false],
      ['b.txt', false],
      ['photos(1)/2024/a.jpg', false],
    ]);
  });

  it('does not pick a name another incoming entry uses', () => {
    const targets = planTargets(
      [file('a.txt'), file('a(2).txt')],
      [{ name: 'a.txt', kindMismatch: false }],
      'keep',
      existing,
    );
    expect(targets.map((t) => t.relativePath)).toEqual(['a(3).txt', 'a(2).txt']);
  });

  it('renames entries that cannot replace what is there even on replace', () => {
    const targets = planTargets(
      [file('notes/x.md')],
      [{ name: 'notes', kindMismatch: true }],
      'replace',
      existing,
    );
    expect(targets).toMatchObject([{ relativePath: 'notes(1)/x.md', override: false }]);
  });
});
