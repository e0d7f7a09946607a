import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendBody } from './staging-file.js';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-append-'));
  file = path.join(dir, 'staging.part');
  await fs.writeFile(file, 'head:');
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** `data` cut into chunks of the given sizes, in turn, like a socket delivers them. */
async function* chunks(data: Buffer, sizes: number[], failAfter?: number): AsyncGenerator<Buffer> {
  let at = 0;
  for (let i = 0; at < data.length; i++) {
    if (failAfter !== undefined && at >= failAfter) throw new Error('connection reset');
    const n = sizes[i % sizes.length]!;
    yield data.subarray(at, at + n);
    at += n;
    await new Promise((r) => setImmediate(r));
  }
}

describe('appendBody', () => {
  it('appends every byte in order across batches, whatever the chunk sizes', async () => {
    const data = crypto.randomBytes(5 * 1024 * 1024 + 777);
    const fh = await fs.open(file, 'r+');
    try {
      const end = await appendBody(fh, 5, data.length, chunks(data, [65536, 1, 300_000, 4096, 1_048_576]));
      expect(end).toBe(5 + data.length);
    } finally {
      await fh.close();
    }
    const written = await fs.readFile(file);
    expect(written.subarray(0, 5).toString()).toBe('head:');
    expect(written.subarray(5).equals(data)).toBe(true);
  });

  it('refuses a body longer than the room left and cuts the file back', async () => {
    const data = crypto.randomBytes(3 * 1024 * 1024);
    const fh = await fs.open(file, 'r+');
    try {
      await expect(appendBody(fh, 5, data.length - 1, chunks(data, [65536]))).rejects.toMatchObject({
        kind: 'payload_too_large',
      });
    } finally {
      await fh.close();
    }
    expect((await fs.readFile(file)).toString()).toBe('head:');
  });

  it('keeps a consistent prefix when the body breaks off, and leaves no write behind', async () => {
    const data = crypto.randomBytes(4 * 1024 * 1024);
    const fh = await fs.open(file, 'r+');
    try {
      await expect(appendBody(fh, 5, data.length, chunks(data, [65536], 3 * 1024 * 1024))).rejects.toThrow(
        'connection reset',
      );
    } finally {
      await fh.close();
    }
    const written = await fs.readFile(file);
    // Whatever was written is the body's beginning; a client resumes from the file's size.
    expect(written.length).toBeLessThanOrEqual(5 + 3 * 1024 * 1024);
    expect(written.subarray(5).equals(data.subarray(0, written.length - 5))).toBe(true);
  });

  it('fails with the disk error when a write fails, without an unhandled rejection', async () => {
    const data = crypto.randomBytes(3 * 1024 * 1024);
    // A read-only handle: every write fails (EBADF) while the body is still arriving.
    const fh = await fs.open(file, 'r');
    try {
      await expect(appendBody(fh, 5, data.length, chunks(data, [65536]))).rejects.toMatchObject({
        code: 'EBADF',
      });
    } finally {
      await fh.close();
    }
    expect((await fs.readFile(file)).toString()).toBe('head:');
  });

  it('writes an empty body as nothing', async () => {
    const fh = await fs.open(file, 'r+');
    try {
      expect(await appendBody(fh, 5, 10, chunks(Buffer.alloc(0), [1]))).toBe(5);
    } finally {
      await fh.close();
    }
  });
});
