import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdaptiveIo } from './adaptive-io.js';
import { Pinned } from '../access/anchor.js';
import {
  FIELDS,
  F_CTIME_NS,
  F_CTIME_S,
  F_DEV,
  F_INO_HI,
  F_INO_LO,
  F_MODE,
  F_MTIME_NS,
  F_MTIME_S,
  F_SIZE,
} from './dir-layout.js';
import { DirReader, type DirSnapshot } from './dir-snapshot.js';
import { nativeAddon, nativeStatus, trimMemory } from './native.js';

/**
 * The native addon (native/fb_native.c) against the JavaScript ways it replaces, on real folders.
 * The server project runs this with the addon loaded (npm builds it at install); the server-js
 * project (vitest.config.ts) runs it with FB_NATIVE=off, where only the first group applies.
 */

const off = process.env.FB_NATIVE === 'off';
const native = !off && process.platform === 'linux';

let base: string;
const pins: Pinned[] = [];
const readers: DirReader[] = [];

async function pin(dir: string): Promise<Pinned> {
  const p = await Pinned.folder(dir);
  pins.push(p);
  return p;
}

function reader(inC: boolean, threads = 0): DirReader {
  const r = new DirReader({ threads, io: new AdaptiveIo(), native: inC });
  readers.push(r);
  return r;
}

/** Each entry's numbers by name. */
function byName(s: DirSnapshot): Map<string, number[]> {
  return new Map(s.names.map((n, i) => [n, [...s.data.subarray(i * FIELDS, (i + 1) * FIELDS)]]));
}

beforeEach(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-native-')));
});

afterEach(async () => {
  await Promise.all(pins.splice(0).map((p) => p.close()));
  await Promise.all(readers.splice(0).map((r) => r.close()));
  await fs.rm(base, { recursive: true, force: true });
});

describe('whether the addon is used', () => {
  it.runIf(off)(
    'is not used with FB_NATIVE=off: folders are read in JavaScript, nothing is trimmed',
    async () => {
      expect(nativeAddon()).toBeUndefined();
      expect(nativeStatus()).toMatch(/in JavaScript .*FB_NATIVE=off/);
      expect(trimMemory()).toBe(false);
      expect((await pin(base)).nativeEntries()).toBeUndefined();
    },
  );

  it.runIf(native)('is built by the install and loaded on Linux', () => {
    expect(nativeAddon(), nativeStatus()).toBeDefined();
    expect(nativeStatus()).toMatch(/read in C/);
    expect(typeof trimMemory()).toBe('boolean');
  });
});

describe.runIf(native)('folders read in C', () => {
  it('gives the names, order and lstat numbers the JavaScript ways give', async () => {
    await fs.mkdir(path.join(base, 'sub'));
    await fs.writeFile(path.join(base, 'a.txt'), 'hello');
    await fs.writeFile(path.join(base, 'été 日本.txt'), '');
    await fs.writeFile(path.join(base, 'line\nbreak'), 'x');
    await fs.utimes(path.join(base, 'a.txt'), new Date(-1500), new Date(-1500)); // before 1970: seconds and ns split as Node does
    for (let i = 0; i < 300; i++) await fs.writeFile(path.join(base, `f${i}`), String(i));
    const { dev } = await fs.stat(base);
    const inC = await reader(true).read(await pin(base), dev);
    const threaded = await reader(false, 1).read(await pin(base), dev);
    const here = await reader(false).read(await pin(base), dev);
    expect(inC.names).toEqual(here.names); // the same order: bytes, as scandir sorts
    expect(inC.sameAs(here)).toBe(true);
    expect(inC.sameAs(threaded)).toBe(true);
    expect(inC.names).not.toContain('.');
    expect(inC.names).not.toContain('..');
    const a = byName(inC).get('a.txt')!;
    const st = await fs.lstat(path.join(base, 'a.txt'), { bigint: true });
    expect(a[F_MODE]).toBe(Number(st.mode));
    expect(a[F_SIZE]).toBe(5);
    expect([a[F_MTIME_S], a[F_MTIME_NS]]).toEqual([-1, -500_000_000]);
    expect(a[F_CTIME_S]! * 1e9 + a[F_CTIME_NS]!).toBe(Number(st.ctimeNs));
    expect(a[F_INO_HI]! * 2 ** 32 + a[F_INO_LO]!).toBe(Number(st.ino));
    expect(a[F_DEV]).toBe(Number(st.dev));
  });

  it('gives times past 2262 as the JavaScript ways do (no count of nanoseconds to overflow)', async () => {
    const far = path.join(base, 'far.txt');
    await fs.writeFile(far, '');
    const year2400 = new Date(Date.UTC(2400, 0, 1));
    await fs.utimes(far, year2400, year2400);
    const st = await fs.lstat(far, { bigint: true });
    const { dev } = await fs.stat(base);
    const inC = await reader(true).read(await pin(base), dev);
    const here = await reader(false).read(await pin(base), dev);
    expect(inC.sameAs(here)).toBe(true);
    const f = byName(inC).get('far.txt')!;
    expect([f[F_MTIME_S], f[F_MTIME_NS]]).toEqual([Number(st.mtimeNs / 1_000_000_000n), 0]);
  });

  it('reports links as links and never follows them', async () => {
    await fs.mkdir(path.join(base, 'outside'));
    await fs.writeFile(path.join(base, 'outside', 'secret.txt'), 'secret');
    await fs.mkdir(path.join(base, 'served'));
    await fs.symlink(path.join(base, 'outside'), path.join(base, 'served', 'to-folder'));
    await fs.symlink('outside/secret.txt', path.join(base, 'served', 'to-file'));
    await fs.symlink('nowhere', path.join(base, 'served', 'dangling'));
    const got = byName(await reader(true).read(await pin(path.join(base, 'served')), 0));
    expect([...got.keys()]).toEqual(['dangling', 'to-file', 'to-folder']);
    for (const [name, numbers] of got) {
      expect(numbers[F_MODE]! & 0o170000, name).toBe(0o120000);
      expect(numbers[F_SIZE], name).toBe((await fs.readlink(path.join(base, 'served', name))).length);
    }
  });

  it('reads the pinned folder even when its path now leads through a link elsewhere', async () => {
    await fs.mkdir(path.join(base, 'served', 'docs'), { recursive: true });
    await fs.writeFile(path.join(base, 'served', 'docs', 'mine.txt'), '');
    await fs.mkdir(path.join(base, 'outside'));
    await fs.writeFile(path.join(base, 'outside', 'secret.txt'), '');
    const folder = await pin(path.join(base, 'served', 'docs'));
    // Swapped between the pin and the read: the path now names a link to a folder outside.
    await fs.rename(path.join(base, 'served', 'docs'), path.join(base, 'moved'));
    await fs.symlink(path.join(base, 'outside'), path.join(base, 'served', 'docs'));
    for (const r of [reader(true), reader(false, 1), reader(false)]) {
      expect((await r.read(folder, 0)).names).toEqual(['mine.txt']);
    }
  });

  it('keeps names that are not UTF-8 as their bytes, decoded as readdir decodes them', async () => {
    const bad = Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x0a, 0x78]); // "bad", two stray bytes, a newline, "x"
    await fs.writeFile(Buffer.concat([Buffer.from(base + '/'), bad]), 'x');
    await fs.writeFile(path.join(base, 'ok'), '');
    const result = await (await pin(base)).nativeEntries()!;
    expect(result.count).toBe(2);
    expect(Buffer.from(result.names)).toEqual(Buffer.concat([bad, Buffer.from('\0ok')]));
    const snapshot = await reader(true).read(await pin(base), 0);
    expect(snapshot.names).toEqual(await fs.readdir(base));
    expect(byName(snapshot).get('bad\ufffd\ufffd\nx')![F_SIZE]).toBe(1);
  });

  it('reads an empty folder', async () => {
    const result = await (await pin(base)).nativeEntries()!;
    expect(result.count).toBe(0);
    expect(result.names.byteLength).toBe(0);
    expect(result.data.length).toBe(0);
    expect((await reader(true).read(await pin(base), 0)).names).toEqual([]);
  });

  it('fails on a descriptor that is not a folder with the error readdir gives (ENOTDIR)', async () => {
    await fs.writeFile(path.join(base, 'file.txt'), 'x');
    const file = (await (await pin(base)).lookup('file.txt'))!;
    pins.push(file);
    await expect(file.nativeEntries()).rejects.toMatchObject({
      code: 'ENOTDIR',
      errno: -20,
      message: expect.stringMatching(/^ENOTDIR: not a directory/),
    });
    await expect(reader(false, 1).read(file, 0)).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(reader(false).read(file, 0)).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(nativeAddon()!.readFolderStats(1_000_000)).rejects.toMatchObject({ code: 'EBADF' });
    expect(() => nativeAddon()!.readFolderStats('3' as unknown as number)).toThrow(TypeError);
  });

  it('marks entries deleted between readdir and their stat as vanished, as statInto does', async () => {
    const dir = path.join(base, 'churn');
    await fs.mkdir(dir);
    const names = Array.from({ length: 2000 }, (_, i) => `f${i}`);
    for (const name of names) await fs.writeFile(path.join(dir, name), 'x');
    const folder = await pin(dir);
    // Another process deletes and recreates the files as fast as it can while the folder is read
    // again and again, until a read has caught one between the two calls.
    const churn = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const d = process.argv[1];
         for (;;) for (let i = 0; i < 2000; i++) { try { fs.unlinkSync(d + '/f' + i); } catch {} fs.writeFileSync(d + '/f' + i, 'x'); }`,
        dir,
      ],
      { stdio: 'ignore' },
    );
    try {
      let vanished = 0;
      while (vanished === 0) {
        const { data, count } = await folder.nativeEntries()!;
        for (let i = 0; i < count; i++) {
          const o = i * FIELDS;
          if (data[o + F_MODE] === -1) {
            vanished++;
            expect([...data.subarray(o + 1, o + FIELDS)].every((n) => n === 0)).toBe(true);
          } else {
            expect(data[o + F_MODE]! & 0o170000).toBe(0o100000);
          }
        }
      }
      expect(vanished).toBeGreaterThan(0);
    } finally {
      churn.kill();
    }
  });

  it('gives glibc memory back on request', () => {
    const blocks = Array.from({ length: 2000 }, () => Buffer.allocUnsafeSlow(4096));
    blocks.length = 0;
    expect(typeof trimMemory()).toBe('boolean');
  });
});
