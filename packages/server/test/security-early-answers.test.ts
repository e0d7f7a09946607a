import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRAIN_BYTES } from '../src/http/connections.js';
import { ALL, PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * An answer given before a large request body was read (401, 403, 409, 413, 507) must reach the
 * client, not "other side closed": a server that closes its socket with the client's bytes unread
 * makes the kernel reset the connection, and the reset drops the answer on the client's side
 * before it is read. Every refusal below comes before the body (or in its
 * middle), with a body of several MiB, to real clients: Node's fetch (undici), which reads while
 * it sends, and a raw socket that sends its whole body before it reads a byte.
 */

let t: FilesApp;
let port: number;
let bob: string;
let reader: string;
let small: string;

const MiB = 1024 * 1024;
const BODY = Buffer.alloc(8 * MiB, 'b');
/** Rounds per case and client: every one must read its answer. */
const ROUNDS = 6;

beforeAll(async () => {
  t = await startFilesApp();
  bob = await t.user('bob');
  reader = await t.user('reader', { perm: { ...ALL, create: false } });
  small = await t.user('small', { quota: MiB });
  await fs.writeFile(path.join(t.root, 'bob', 'exists.bin'), 'already here');
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as net.AddressInfo).port;
});
afterAll(() => t.close());

interface Case {
  name: string;
  method: string;
  url: string;
  headers: () => Record<string, string>;
  status: number;
  body: string | RegExp;
}

const cases: Case[] = [
  {
    name: '401 before the body: no credentials',
    method: 'PUT',
    url: '/api/resources/bob/a.bin',
    headers: () => ({}),
    status: 401,
    body: '401 Unauthorized\n',
  },
  {
    name: '403 before the body: no create permission',
    method: 'POST',
    url: '/api/resources/new.bin',
    headers: () => ({ 'x-auth': reader }),
    status: 403,
    body: '403 Forbidden (this needs the create permission)\n',
  },
  {
    name: '409 before the body: the file exists',
    method: 'POST',
    url: '/api/resources/exists.bin',
    headers: () => ({ 'x-auth': bob }),
    status: 409,
    body: '409 Conflict\n',
  },
  {
    name: '507 before the body: over the quota',
    method: 'POST',
    url: '/api/resources/big.bin',
    headers: () => ({ 'x-auth': small }),
    status: 507,
    body: /^507 Insufficient Storage \([Qq]uota .+\)\n$/,
  },
  {
    name: "413 before the body: Fastify's limit of a JSON body",
    method: 'POST',
    url: '/api/login',
    headers: () => ({ 'content-type': 'application/json' }),
    status: 413,
    body: /^413 Payload Too Large \(.+\)\n$/,
  },
  {
    name: '413 before the body: a WebDAV PROPFIND body over its 16 KiB',
    method: 'PROPFIND',
    url: '/dav/',
    headers: () => ({
      authorization: 'Basic ' + Buffer.from(`bob:${PASSWORD}`).toString('base64'),
      depth: '1',
    }),
    status: 413,
    body: '413 Payload Too Large (the XML body of a PROPFIND may hold at most 16 KiB)\n',
  },
  {
    name: '413 in the middle of the body: a tus PATCH past Upload-Length',
    method: 'PATCH',
    url: '/api/tus/over.bin',
    headers: () => ({
      'x-auth': bob,
      'tus-resumable': '1.0.0',
      'content-type': 'application/offset+octet-stream',
      'upload-offset': '0',
    }),
    status: 413,
    body: '413 Payload Too Large (the request body goes past Upload-Length)\n',
  },
];

/** Before every round: the tus upload the PATCH case writes past (2 MiB declared). */
async function prepare(c: Case): Promise<void> {
  if (!c.url.startsWith('/api/tus/')) return;
  const res = await fetch(`http://127.0.0.1:${port}${c.url}?override=true`, {
    method: 'POST',
    headers: { 'x-auth': bob, 'tus-resumable': '1.0.0', 'upload-length': String(2 * MiB) },
  });
  expect(res.status).toBe(201);
}

/**
 * The raw way: the whole request written and handed to the kernel, and only then the answer
 * read. A server that stops reading never lets the write finish; one that closes with the body
 * unread resets the connection under the unread answer.
 */
function rawExchange(c: Case): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const head = Object.entries({ host: 'localhost', 'content-length': String(BODY.length), ...c.headers() })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    let received = Buffer.alloc(0);
    socket.on('error', (err) => reject(new Error(`${c.name}: ${err.message} after ${received.toString()}`)));
    socket.pause();
    socket.write(`${c.method} ${c.url} HTTP/1.1\r\n${head}\r\n`);
    socket.write(BODY, () => {
      socket.on('data', (d: Buffer) => {
        received = Buffer.concat([received, d]);
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = received.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (received.length < end + 4 + length) return;
        socket.destroy();
        resolve({
          status: Number(head.slice(0, head.indexOf('\r\n')).split(' ')[1]),
          body: received.subarray(end + 4, end + 4 + length).toString(),
        });
      });
      socket.resume();
    });
  });
}

function expectBody(text: string, body: string | RegExp): void {
  if (typeof body === 'string') expect(text).toBe(body);
  else expect(text).toMatch(body);
}

describe('an answer given before a large body was read reaches the client', () => {
  for (const c of cases) {
    it(`${c.name}: fetch reads it every time`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        await prepare(c);
        const res = await fetch(`http://127.0.0.1:${port}${c.url}`, {
          method: c.method,
          headers: c.headers(),
          body: BODY,
        }).catch((err: Error) => {
          throw new Error(
            `round ${round}: ${err.message} (${String((err.cause as Error | undefined)?.message)})`,
          );
        });
        const text = await res.text();
        expect(res.status, `round ${round}: ${text}`).toBe(c.status);
        expectBody(text, c.body);
      }
    });

    it(`${c.name}: a client that reads only after sending its whole body reads it every time`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        await prepare(c);
        const res = await rawExchange(c);
        expect(res.status, `round ${round}`).toBe(c.status);
        expectBody(res.body, c.body);
      }
    });
  }

  it('reads no more than DRAIN_BYTES of a refused body before it closes the connection', async () => {
    const declared = 1024 * MiB;
    // Half-open allowed: the server's FIN after its answer does not end the sending here.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.write(
      `PUT /api/resources/bob/a.bin HTTP/1.1\r\nhost: localhost\r\ncontent-length: ${declared}\r\n\r\n`,
    );
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    let sent = 0;
    const piece = Buffer.alloc(MiB, 'x');
    const closed = new Promise<void>((resolve) => {
      socket.on('error', () => resolve());
      socket.on('close', () => resolve());
    });
    // Sends for as long as the server reads: its budget, then the close, end the loop.
    while (!socket.destroyed && sent < declared) {
      const more = socket.write(piece);
      sent += piece.length;
      if (!more) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
    }
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(sent).toBeLessThan(DRAIN_BYTES + 64 * MiB);
  });
});
