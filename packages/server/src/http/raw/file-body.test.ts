import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSendfile } from '../../../native/build-sendfile.mjs';
import { CHUNK, PROBE, writeFileRange } from './file-body.js';
import { loadSendfile, type SendfileAddon } from './sendfile.js';

let dir: string;
let file: string;
let content: Buffer;
let addon: SendfileAddon | undefined;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-file-body-'));
  file = path.join(dir, 'data.bin');
  // Many more chunks than are ever in flight, and a ragged end.
  content = crypto.randomBytes(CHUNK * 11 + 12345);
  await fs.writeFile(file, content);
  if (process.platform === 'linux') {
    const built = path.join(dir, 'sendfile.node');
    const whyNot = buildSendfile(built);
    if (whyNot) throw new Error(`the sendfile addon must build here: ${whyNot}`);
    addon = loadSendfile(built);
    if (!addon) throw new Error('the built sendfile addon does not load');
  }
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** The addon, counting what it sends, so a test knows the kernel path really ran. */
function counting(real: SendfileAddon) {
  const seen = { calls: 0, bytes: 0 };
  const sender: SendfileAddon = {
    send: async (...args) => {
      seen.calls++;
      const n = await real.send(...args);
      if (n > 0) seen.bytes += n;
      return n;
    },
  };
  return { sender, seen };
}

type Way = { name: string; sender: () => SendfileAddon | undefined };
const ways: Way[] = [
  { name: 'read and write', sender: () => undefined },
  ...(process.platform === 'linux' ? [{ name: 'sendfile', sender: () => addon }] : []),
];

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

describe.each(ways)('writeFileRange by $name', (way) => {
  /** A server answering every request with `writeFileRange(start, end)`; reports how it ended. */
  async function serve(start: number, end: number, source = file, sender = way.sender()) {
    const outcomes: Promise<unknown>[] = [];
    const server = http.createServer((_req, res) => {
      outcomes.push(
        (async () => {
          const fh = await fs.open(source);
          try {
            res.writeHead(200, { 'content-length': String(end - start + 1) });
            await writeFileRange(res, fh, start, end, sender);
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

  it('sends every byte of a file in order, to fast and to slow readers', async () => {
    const real = way.sender();
    const count = real && counting(real);
    const s = await serve(0, content.length - 1, file, count?.sender);
    try {
      expect((await download(s.url)).equals(content)).toBe(true);
      expect((await download(s.url, { slow: true })).equals(content)).toBe(true);
      expect(await Promise.all(s.outcomes)).toEqual(['done', 'done']);
      // The kernel sent bytes itself; Node only the first and those after a full socket.
      if (count) expect(count.seen.bytes).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });

  it('sends ranges exactly, also where they cross a read or probe boundary', async () => {
    const ranges: [number, number][] = [
      [1000, CHUNK * 3 + 17],
      [CHUNK - 1, CHUNK],
      [PROBE - 1, PROBE + 1],
      [PROBE, 2 * PROBE + CHUNK],
      [5, 5],
      [content.length - 3, content.length - 1],
    ];
    for (const [start, end] of ranges) {
      const s = await serve(start, end);
      try {
        const got = await download(s.url);
        expect({ start, end, same: got.equals(content.subarray(start, end + 1)) }).toEqual({
          start,
          end,
          same: true,
        });
      } finally {
        await s.close();
      }
    }
  });

  it('pads with zeros when the file shrank after its length was announced', async () => {
    const copy = path.join(dir, 'shrinking.bin');
    await fs.writeFile(copy, content.subarray(0, 5000));
    const s = await serve(0, PROBE * 3 - 1, copy);
    try {
      const body = await download(s.url);
      expect(body.length).toBe(PROBE * 3);
      expect(body.subarray(0, 5000).equals(content.subarray(0, 5000))).toBe(true);
      expect(body.subarray(5000).every((b) => b === 0)).toBe(true);
    } finally {
      await s.close();
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

describe.runIf(process.platform === 'linux')('writeFileRange with the sendfile addon', () => {
  it('keeps the bytes of a TLS connection in Node, which encrypts them', async () => {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
      '-days', '1', '-subj', '/CN=127.0.0.1',
    ], { stdio: 'ignore' }); // prettier-ignore
    const { sender, seen } = counting(addon!);
    const server = https.createServer(
      { key: await fs.readFile(key), cert: await fs.readFile(cert) },
      async (_req, res) => {
        const fh = await fs.open(file);
        res.writeHead(200, { 'content-length': String(content.length) });
        await writeFileRange(res, fh, 0, content.length - 1, sender).finally(() => fh.close());
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const body = await new Promise<Buffer>((resolve, reject) => {
        https
          .get(
            `https://127.0.0.1:${(server.address() as AddressInfo).port}/`,
            { rejectUnauthorized: false },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => resolve(Buffer.concat(chunks)));
              res.on('error', reject);
            },
          )
          .on('error', reject);
      });
      expect(body.equals(content)).toBe(true);
      expect(seen.calls).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('sends nothing behind Node for a HEAD request', async () => {
    const { sender, seen } = counting(addon!);
    const server = http.createServer(async (_req, res) => {
      const fh = await fs.open(file);
      res.writeHead(200, { 'content-length': String(content.length) });
      await writeFileRange(res, fh, 0, content.length - 1, sender).finally(() => fh.close());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      // Two requests on one kept-alive connection: stray body bytes would break the second.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const head = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = http.request(url, { method: 'HEAD', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res));
        });
        req.on('error', reject).end();
      });
      expect(head.headers['content-length']).toBe(String(content.length));
      const body = await new Promise<Buffer>((resolve, reject) => {
        http
          .get(url, { agent }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve(Buffer.concat(chunks)));
          })
          .on('error', reject);
      });
      agent.destroy();
      expect(body.equals(content)).toBe(true);
      expect(seen.bytes).toBeGreaterThan(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
