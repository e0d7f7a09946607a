import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEntryFile, openPinCount, Pinned, readEntryFileSync } from '../access/anchor.js';
import { readExactly, SMALL_FILE, type ArchiveEntry } from './entries.js';

let dir: string;
let folder: Pinned;
let pinsBefore: number;

beforeEach(async () => {
  pinsBefore = openPinCount();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-archive-entries-'));
  folder = await Pinned.folder(dir);
});

afterEach(async () => {
  await folder.close();
  expect(openPinCount()).toBe(pinsBefore);
  await fs.rm(dir, { recursive: true, force: true });
});

/** A member as the archive walk makes it: `size` as listed, read through the pool or in one go. */
function member(name: string, size: number, sync: boolean, read: number[]): ArchiveEntry {
  return {
    name,
    isDir: false,
    size,
    mode: 0o644,
    mtimeMs: 0,
    open: () => openEntryFile(folder, name),
    ...(sync ? { readSmall: (into: Buffer) => readEntryFileSync(folder, name, into) } : {}),
    onRead: (n) => void read.push(n),
  };
}

async function bytesOf(entry: ArchiveEntry): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of readExactly(entry)) parts.push(chunk);
  return Buffer.concat(parts);
}

describe('readExactly', () => {
  for (const sync of [true, false]) {
    const way = sync ? 'in one synchronous go' : 'through the thread pool';

    it(`reads exactly the listed size ${way}: a file that shrank is padded, one that grew is cut`, async () => {
      const content = crypto.randomBytes(10_000);
      await fs.writeFile(path.join(dir, 'same.bin'), content);
      await fs.writeFile(path.join(dir, 'shrank.bin'), content.subarray(0, 4_000));
      await fs.writeFile(path.join(dir, 'grew.bin'), Buffer.concat([content, content]));
      const read: number[] = [];
      expect((await bytesOf(member('same.bin', 10_000, sync, read))).equals(content)).toBe(true);
      const shrank = await bytesOf(member('shrank.bin', 10_000, sync, read));
      expect(shrank.length).toBe(10_000);
      expect(shrank.subarray(0, 4_000).equals(content.subarray(0, 4_000))).toBe(true);
      expect(shrank.subarray(4_000).every((b) => b === 0)).toBe(true);
      expect((await bytesOf(member('grew.bin', 10_000, sync, read))).equals(content)).toBe(true);
      // Progress counts the bytes that came from the files, not the padding.
      expect(read.reduce((a, b) => a + b, 0)).toBe(10_000 + 4_000 + 10_000);
    });

    it(`keeps the archive well-formed ${way} when the file vanished or became a named pipe`, async () => {
      const gone = await bytesOf(member('gone.bin', 3_000, sync, []));
      expect(gone.equals(Buffer.alloc(3_000))).toBe(true);
      execFileSync('mkfifo', [path.join(dir, 'pipe')]);
      // Never waited on: refused at once, zeros in its place.
      const pipe = await bytesOf(member('pipe', 2_000, sync, []));
      expect(pipe.equals(Buffer.alloc(2_000))).toBe(true);
    });
  }

  it('reads files over the small-file bound through the pool even when offered the fast way', async () => {
    const content = crypto.randomBytes(SMALL_FILE + 1);
    await fs.writeFile(path.join(dir, 'big.bin'), content);
    let synchronous = 0;
    const entry: ArchiveEntry = {
      ...member('big.bin', content.length, false, []),
      readSmall: () => ++synchronous,
    };
    expect((await bytesOf(entry)).equals(content)).toBe(true);
    expect(synchronous).toBe(0);
  });
});
