import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.js';

/*
 * Class: request smuggling (File Browser's GHSA-6jqf-mv7m-3q7p came through a dependency). A
 * request whose length two headers disagree on lets a proxy and the server see different request
 * boundaries; the server must refuse it and answer nothing for what could be a hidden second
 * request.
 */

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(() => t.close());

/** Writes `raw` on a fresh connection and reads everything until the server closes it. */
function exchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(raw));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

const HIDDEN = 'GET /api/users HTTP/1.1\r\nHost: x\r\nX-Auth: smuggled\r\n\r\n';

describe('request smuggling', () => {
  it('refuses a body framed by both Content-Length and Transfer-Encoding, answering once', async () => {
    const reply = await exchange(
      'POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' +
        HIDDEN,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
  });

  it('refuses two different Content-Length headers, answering once', async () => {
    const reply = await exchange(
      'POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\nContent-Length: 60\r\n\r\n{}' +
        HIDDEN,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
  });

  it('answers a well-framed pipelined pair twice, so the checks above are not vacuous', async () => {
    const reply = await exchange(
      'GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(reply.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
  });
});
