import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  descriptorPath,
  isAnchored,
  openPinCount,
  Pinned,
  useAnchoringForTests,
  watchLookupsForTests,
} from './anchor.js';

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

/** The two ways to look an entry up, which must answer alike (one core, see `Pinned.lookupCalls`). */
const ways = {
  lookup: (folder: Pinned, name: string) => folder.lookup(name),
  lookupSync: async (folder: Pinned, name: string) => folder.lookupSync(name),
};

describe.each([
  ['lookup', true],
  ['lookupSync', true],
  ['lookup', false],
  ['lookupSync', false],
] as const)('Pinned.%s (anchored: %s)', (way, anchored) => {
  const lookup = ways[way];
  let tree: string;
  let socket: net.Server;
  let restore: () => void;
  let before: number;

  beforeAll(async () => {
    tree = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-lookup-')));
    await fs.mkdir(path.join(tree, 'kept'));
    await fs.writeFile(path.join(tree, 'kept', 'inside.txt'), 'kept');
    await fs.mkdir(path.join(tree, 'outside'));
    await fs.writeFile(path.join(tree, 'outside', 'secret.txt'), 'secret');
    await fs.symlink(path.join(tree, 'outside'), path.join(tree, 'link'));
    await fs.writeFile(path.join(tree, 'file.txt'), 'file');
    execFileSync('mkfifo', [path.join(tree, 'pipe')]);
    socket = net.createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(tree, 'socket'), resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => socket.close(resolve));
    await fs.rm(tree, { recursive: true, force: true });
  });
  beforeEach(() => {
    restore = useAnchoringForTests(anchored);
    before = openPinCount();
  });
  afterEach(() => {
    restore();
    expect(openPinCount(), 'every pin let go').toBe(before);
  });

  it('pins a folder and a file as what they are, with their real paths', async () => {
    const folder = await Pinned.folder(tree);
    try {
      const kept = (await lookup(folder, 'kept'))!;
      const file = (await lookup(folder, 'file.txt'))!;
      expect(kept.stat.isDirectory()).toBe(true);
      expect(kept.real).toBe(path.join(tree, 'kept'));
      expect(await fs.readdir(kept.path)).toEqual(['inside.txt']);
      expect(file.stat.isFile()).toBe(true);
      expect(file.stat.ino).toBe((await fs.stat(path.join(tree, 'file.txt'))).ino);
      await kept.close();
      await file.close();
    } finally {
      await folder.close();
    }
  });

  it('pins a link itself: its target is never reached through it', async () => {
    const folder = await Pinned.folder(tree);
    try {
      const link = (await lookup(folder, 'link'))!;
      expect(link.stat.isSymbolicLink()).toBe(true);
      expect(link.stat.isDirectory()).toBe(false);
      expect(link.real).toBe(path.join(tree, 'link'));
      await link.close();
    } finally {
      await folder.close();
    }
  });

  it('pins a named pipe and a socket without opening them (no wait for a writer)', async () => {
    const folder = await Pinned.folder(tree);
    try {
      const pipe = (await lookup(folder, 'pipe'))!;
      const sock = (await lookup(folder, 'socket'))!;
      expect(pipe.stat.isFIFO()).toBe(true);
      expect(sock.stat.isSocket()).toBe(true);
      await pipe.close();
      await sock.close();
    } finally {
      await folder.close();
    }
  });

  it('pins a device as a device', async () => {
    const dev = await Pinned.folder('/dev');
    try {
      const nul = (await lookup(dev, 'null'))!;
      expect(nul.stat.isCharacterDevice()).toBe(true);
      await nul.close();
    } finally {
      await dev.close();
    }
  });

  it('finds nothing for a missing name, nor below a file, and refuses a name that is a path', async () => {
    const folder = await Pinned.folder(tree);
    const file = (await lookup(folder, 'file.txt'))!;
    try {
      expect(await lookup(folder, 'missing')).toBeUndefined();
      // The file stands where a folder is expected: ENOTDIR, answered like a missing name.
      expect(await lookup(file, 'below')).toBeUndefined();
      await expect(lookup(folder, 'kept/inside.txt')).rejects.toThrow(/not a file name/);
      await expect(lookup(folder, '.')).rejects.toThrow(/not a file name/);
      await expect(lookup(folder, '')).rejects.toThrow(/not a file name/);
    } finally {
      await file.close();
      await folder.close();
    }
  });

  it('is seen by a test watching lookups', async () => {
    const seen: string[] = [];
    const stop = watchLookupsForTests((real) => seen.push(real));
    const folder = await Pinned.folder(tree);
    try {
      await (await lookup(folder, 'kept'))!.close();
      expect(await lookup(folder, 'missing')).toBeUndefined();
    } finally {
      stop();
      await folder.close();
    }
    expect(seen).toEqual([path.join(tree, 'kept'), path.join(tree, 'missing')]);
  });

  // Path strings cannot tell a folder from a link swapped in for it (docs/security.md).
  it.runIf(anchored && isAnchored())(
    'looks in the folder held, not in a link to elsewhere swapped in for it',
    async () => {
      const folder = await Pinned.folder(tree);
      const kept = (await lookup(folder, 'kept'))!;
      await fs.rename(path.join(tree, 'kept'), path.join(tree, 'kept-away'));
      await fs.symlink(path.join(tree, 'outside'), path.join(tree, 'kept'));
      try {
        expect(await lookup(kept, 'secret.txt')).toBeUndefined();
        const inside = (await lookup(kept, 'inside.txt'))!;
        expect(inside.stat.ino).toBe((await fs.stat(path.join(tree, 'kept-away', 'inside.txt'))).ino);
        await inside.close();
        // Looked up anew, the name is the link now, pinned as a link.
        const swapped = (await lookup(folder, 'kept'))!;
        expect(swapped.stat.isSymbolicLink()).toBe(true);
        await swapped.close();
      } finally {
        await fs.unlink(path.join(tree, 'kept'));
        await fs.rename(path.join(tree, 'kept-away'), path.join(tree, 'kept'));
        await kept.close();
        await folder.close();
      }
    },
  );
});

describe.runIf(isAnchored())('descriptor paths', () => {
  let root: string;
  beforeAll(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-anchor-')));
    await fs.writeFile(path.join(root, 'a.txt'), 'a');
  });
  afterAll(() => fs.rm(root, { recursive: true, force: true }));

  // A listing stats every entry through its folder's descriptor path; `/proc/self` would be one
  // more link for the kernel to follow on each of them (bench/results/2026-11-23-first-full-runs-and-where-the-time-went.md).
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
