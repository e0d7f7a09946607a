import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK, writeFileRange } from './file-body.js';

let dir: string;
let file: string;
let content: Buffer;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-file-body-'));
  file = path.join(dir, 'data.bin');
  // Many more chunks than are ever in flight, and a ragged end.
  content = crypto.randomBytes(CHUNK * 11 + 12345);
  await fs.writeFile(file, content);
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A server answering every request with `writeFileRange(start, end)`; reports how it ended. */
async function serve(start: number, end: number, source = file) {
  const outcomes: Promise<unknown>[] = [];
  const server = http.createServer((_req, res) => {
    outcomes.push(
      (async () => {
        const fh = await fs.open(source);
        try {
          res.writeHead(200, { 'content-length': String(end - start + 1) });
          await writeFileRange(res, fh, start, end);
          return 'done';
        } catch (err) {
          return err;
        } finally {
          await fh.close();
        }
      })(),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, outcomes, close: () => new Promise((r) => server.close(r)) };
}

function download(url: string, { slow = false } = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (slow) {
            res.pause();
            setTimeout(() => res.resume(), 1);
          }
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

describe('writeFileRange', () => {
  it('sends every byte of a file in order, to fast and to slow readers', async () => {
    const s = await serve(0, content.length - 1);
    try {
      expect((await download(s.url)).equals(content)).toBe(true);
      expect((await download(s.url, { slow: true })).equals(content)).toBe(true);
      expect(await Promise.all(s.outcomes)).toEqual(['done', 'done']);
    } finally {
      await s.close();
    }
  });

  it('sends a range', async () => {
    const s = await serve(1000, CHUNK * 3 + 17);
    try {
      expect((await download(s.url)).equals(content.subarray(1000, CHUNK * 3 + 18))).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('sends small files at the same time, then a big one, whole', async () => {
    // More transfers at once than idle chunks are kept, so some may get a buffer the size of their
    // small file; whichever buffers the big one gets, it must still send every byte.
    const small = path.join(dir, 'small.bin');
    await fs.writeFile(small, content.subarray(0, 3000));
    const smalls = await Promise.all([1, 2, 3, 4].map(() => serve(0, 2999, small)));
    const s = await serve(0, content.length - 1);
    try {
      const bodies = await Promise.all(smalls.map((x) => download(x.url)));
      for (const body of bodies) expect(body.equals(content.subarray(0, 3000))).toBe(true);
      expect((await download(s.url)).equals(content)).toBe(true);
      expect(await Promise.all([...smalls, s].flatMap((x) => x.outcomes))).toEqual(Array(5).fill('done'));
    } finally {
      await Promise.all([...smalls, s].map((x) => x.close()));
    }
  });

  it('pads with zeros when the file shrank after its length was announced', async () => {
    const copy = path.join(dir, 'shrinking.bin');
    await fs.writeFile(copy, content.subarray(0, 5000));
    const answer = async (res: http.ServerResponse) => {
      const fh = await fs.open(copy);
      res.writeHead(200, { 'content-length': '8000' });
      await writeFileRange(res, fh, 0, 7999).finally(() => fh.close());
    };
    const server = http.createServer((_req, res) => {
      answer(res).catch((err: Error) => res.destroy(err));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const body = await download(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(body.length).toBe(8000);
      expect(body.subarray(0, 5000).equals(content.subarray(0, 5000))).toBe(true);
      expect(body.subarray(5000).every((b) => b === 0)).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('stops, and says so, when the client goes away', async () => {
    // Far more than the socket buffers hold, so the server is still sending when the client leaves.
    const big = path.join(dir, 'sparse.bin');
    await fs.writeFile(big, '');
    await fs.truncate(big, 256 * 1024 * 1024);
    const s = await serve(0, 256 * 1024 * 1024 - 1, big);
    try {
      await new Promise<void>((resolve) => {
        const req = http.get(s.url, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => undefined);
      });
      const [outcome] = await Promise.all(s.outcomes);
      expect(outcome).toBeInstanceOf(Error);
    } finally {
      await s.close();
    }
  });
});
