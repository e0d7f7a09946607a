import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descriptorPath, isAnchored, openPinCount, Pinned, useAnchoringForTests } from './anchor.js';

let dir: string;

beforeAll(async () => {
  dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-anchor-')));
  await fs.mkdir(path.join(dir, 'sub'));
  await fs.writeFile(path.join(dir, 'sub', 'inside.txt'), 'x');
  await fs.mkdir(path.join(dir, 'outside'));
  await fs.writeFile(path.join(dir, 'outside', 'secret.txt'), 'x');
  await fs.symlink(path.join(dir, 'outside'), path.join(dir, 'link'));
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe.each([true, false])('Pinned.lookupSync (anchored: %s)', (anchored) => {
  it('finds what lookup finds, holds it like lookup, and lets it go at close', async () => {
    const restore = useAnchoringForTests(anchored);
    const before = openPinCount();
    const folder = await Pinned.folder(dir);
    try {
      const sync = folder.lookupSync('sub')!;
      const async = (await folder.lookup('sub'))!;
      expect(sync.real).toBe(async.real);
      expect(sync.stat.ino).toBe(async.stat.ino);
      expect(sync.stat.isDirectory()).toBe(true);
      expect((await sync.statNs()).ino).toBe(BigInt(async.stat.ino));
      // Its entries are named through it, as through any pin.
      expect(await fs.readdir(sync.path)).toEqual(['inside.txt']);
      expect((await fs.stat(sync.child('inside.txt'))).isFile()).toBe(true);
      await async.close();
      await sync.close();
      expect(() => sync.path).toThrow(/after it was released/);
      expect(openPinCount()).toBe(before + (isAnchored() ? 1 : 0)); // only the folder
    } finally {
      await folder.close();
      restore();
    }
    expect(openPinCount()).toBe(before);
  });

  it('does not follow a link, finds nothing for a missing name and refuses a path', async () => {
    const restore = useAnchoringForTests(anchored);
    const before = openPinCount();
    const folder = await Pinned.folder(dir);
    try {
      const link = folder.lookupSync('link')!;
      expect(link.stat.isSymbolicLink()).toBe(true);
      expect(link.stat.isDirectory()).toBe(false);
      await link.close();
      expect(folder.lookupSync('missing')).toBeUndefined();
      expect(() => folder.lookupSync('sub/inside.txt')).toThrow(/not a file name/);
    } finally {
      await folder.close();
      restore();
    }
    expect(openPinCount()).toBe(before);
  });
});

describe.runIf(isAnchored())('descriptor paths', () => {
  let root: string;
  beforeAll(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-anchor-')));
    await fs.writeFile(path.join(root, 'a.txt'), 'a');
  });
  afterAll(() => fs.rm(root, { recursive: true, force: true }));

  // A listing stats every entry through its folder's descriptor path; `/proc/self` would be one
  // more link for the kernel to follow on each of them (docs/performance.md).
  it('names a pinned folder and its entries through /proc/<pid>/fd, reaching the folder held', async () => {
    const dir = await Pinned.folder(root);
    try {
      expect(dir.path).toMatch(new RegExp(`^/proc/${process.pid}/fd/\\d+$`));
      expect(dir.child('a.txt')).toBe(`${dir.path}/a.txt`);
      expect(dir.real).toBe(root);
      // The folder is held, not named: renamed away, the same path still reaches it.
      await fs.rename(root, `${root}-moved`);
      try {
        expect(await fs.readFile(dir.child('a.txt'), 'utf8')).toBe('a');
      } finally {
        await fs.rename(`${root}-moved`, root);
      }
    } finally {
      await dir.close();
    }
  });

  // Previews hand the opened file to sharp by name and to ffmpeg as its descriptor 3.
  it('names an open descriptor for this process, and one handed to a child for the child', async () => {
    const fh = await fs.open(path.join(root, 'a.txt'));
    try {
      expect(descriptorPath(fh.fd)).toBe(`/proc/${process.pid}/fd/${fh.fd}`);
      expect(await fs.readFile(descriptorPath(fh.fd), 'utf8')).toBe('a');
      // The child resolves the name itself: `/proc/<our pid>` would be our own descriptor 3.
      expect(descriptorPath(3, 'child')).toBe('/proc/self/fd/3');
      const read = execFileSync('cat', [descriptorPath(3, 'child')], {
        stdio: ['ignore', 'pipe', 'pipe', fh.fd],
      });
      expect(read.toString()).toBe('a');
    } finally {
      await fh.close();
    }
  });
});
