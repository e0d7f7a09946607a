import { execFileSync } from 'node:child_process';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { threadPoolSize } from '../src/config/defaults.js';
import type { ServerConfig } from '../src/config/types.js';
import { createLogger } from '../src/logging.js';
import { serve, type RunningServer } from '../src/cli/serve.js';
import { loadConfig } from '../src/config/load.js';
import { serverRecordFromConfig } from '../src/config/server-record.js';
import { startFilesApp, type FilesApp } from './files-helpers.js';
import { freePort } from './tools.js';

/**
 * 20,000 idle connections from one address must not exhaust the server's file descriptors and
 * fail every other request. Connections are capped per client address and in
 * all, headers must come within a bounded time, and a connection on which nothing moves while
 * it is the client's turn is closed; a slow client whose bytes keep coming, and a request the
 * server itself is slow to answer, are never cut. The limits are made small through the
 * configuration, and every wait is for an event (a connection accepted or closed, an answer).
 */

let t: FilesApp | undefined;
/** The server's side of every connection it accepted, refused ones included, in order. */
let accepted: net.Socket[] = [];
let onAccept: (() => void) | undefined;
const clients = new Set<net.Socket>();
afterEach(async () => {
  for (const socket of clients) socket.destroy();
  clients.clear();
  await t?.close();
  t = undefined;
});

async function start(config: Partial<ServerConfig>, lines: Array<Record<string, unknown>> = []) {
  const capture = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
  t = await startFilesApp(
    // Loopback is trusted by default, as the reverse proxy on the same host: not here.
    { trustedProxies: [], ...config },
    { logger: createLogger(capture, 'json', 'warn') },
  );
  accepted = [];
  t.app.server.on('connection', (socket: net.Socket) => {
    accepted.push(socket);
    onAccept?.();
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (t.app.server.address() as net.AddressInfo).port;
  const bob = await t.user('bob');
  return { app: t, port, bob };
}

/** Resolves once the server has taken `n` connections in all (accepted or refused). */
function acceptedCount(n: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (accepted.length < n) return;
      onAccept = undefined;
      resolve();
    };
    onAccept = check;
    check();
  });
}

/** A connection from `from` (a loopback address of this host), once connected. */
function connect(
  port: number,
  from = '127.0.0.1',
  opts: { allowHalfOpen?: boolean } = {},
): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from, ...opts });
    clients.add(socket);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

interface Outcome {
  /** What the server sent before the connection closed (or the first whole answer). */
  text: string;
  status: number | undefined;
  closed: boolean;
}

/**
 * Sends `request` (if any) and waits for a whole answer (by its Content-Length) or the end of
 * the connection, whichever comes first.
 */
function exchange(socket: net.Socket, request?: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let text = '';
    const done = (closed: boolean) => {
      socket.removeAllListeners('data');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ text, status: status ? Number(status) : undefined, closed });
    };
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
      if (end >= 0 && length !== undefined && text.length >= end + 4 + Number(length)) done(false);
    });
    socket.once('close', () => done(true));
    socket.on('error', () => undefined);
    if (request) socket.write(request);
  });
}

/** Sends `request` (if any) and answers all the server sent once the connection has closed. */
function untilClosed(socket: net.Socket, request?: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.once('close', () => resolve(text));
    socket.on('error', () => undefined);
    if (request) socket.write(request);
  });
}

const get = (url: string, token?: string) =>
  `GET ${url} HTTP/1.1\r\nhost: localhost\r\n${token ? `x-auth: ${token}\r\n` : ''}\r\n`;

describe('connections per address and in all', () => {
  it('refuses a connection past the cap of its address at once; other addresses and the open ones are served', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const { port, bob } = await start({ maxConnectionsPerAddress: 5 }, lines);
    const idle: net.Socket[] = [];
    for (let i = 0; i < 5; i++) idle.push(await connect(port));
    await acceptedCount(5);

    // The next one from the same address is closed before any answer, whatever it sends.
    const over = await connect(port);
    const refused = await exchange(over, get('/api/resources/', bob));
    expect(refused).toMatchObject({ closed: true, text: '' });
    expect(lines.filter((l) => l.event === 'connection_refused')).toHaveLength(1);

    // Another client (another address) gets its answer.
    const other = await exchange(await connect(port, '127.0.0.2'), get('/api/resources/', bob));
    expect(other.status).toBe(200);

    // The idle connections were not touched: each still takes a request.
    for (const socket of idle) expect((await exchange(socket, get('/api/resources/', bob))).status).toBe(200);
  });

  it('frees the place of a closed connection', async () => {
    const { port, bob } = await start({ maxConnectionsPerAddress: 2 });
    const first = await connect(port);
    await connect(port);
    await acceptedCount(2);
    const gone = new Promise((resolve) => accepted[0]!.once('close', resolve));
    first.destroy();
    await gone;
    expect((await exchange(await connect(port), get('/api/resources/', bob))).status).toBe(200);
  });

  it('refuses past the cap in all, from any address', async () => {
    const { port, bob } = await start({ maxConnections: 4, maxConnectionsPerAddress: 100 });
    for (const from of ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']) await connect(port, from);
    await acceptedCount(4);
    const refused = await exchange(await connect(port, '127.0.0.5'), get('/api/resources/', bob));
    expect(refused).toMatchObject({ closed: true, text: '' });
  });

  it('does not cap a trusted proxy as one client: it counts only towards the total', async () => {
    const { port, bob } = await start({ maxConnectionsPerAddress: 2, trustedProxies: ['127.0.0.3'] });
    const through: net.Socket[] = [];
    for (let i = 0; i < 6; i++) through.push(await connect(port, '127.0.0.3'));
    await acceptedCount(6);
    for (const socket of through) {
      const res = await exchange(socket, get('/api/resources/', bob));
      expect(res.status).toBe(200);
    }
  });
});

describe('timeouts a slow client survives', () => {
  it('closes a connection that sends half its headers and stops, and one that sends nothing', async () => {
    const { port } = await start({ headersTimeout: 1, idleTimeout: 3600 });
    const half = await connect(port);
    const silent = await connect(port);
    const [a, b] = await Promise.all([
      untilClosed(half, 'GET /api/resources/ HTTP/1.1\r\nhost: localhost\r\nx-au'),
      untilClosed(silent),
    ]);
    // Node answers 408 before it closes a request it was waiting for; the silent one sent none.
    expect(a).toMatch(/^(HTTP\/1\.1 408 |$)/);
    expect(b).toMatch(/^(HTTP\/1\.1 408 |$)/);
  });

  it('closes a connection whose body stops coming, and keeps nothing of the upload', async () => {
    const { app, port, bob } = await start({ headersTimeout: 3600, idleTimeout: 1 });
    const socket = await connect(port);
    const text = await untilClosed(
      socket,
      `POST /api/resources/stalled.bin HTTP/1.1\r\nhost: localhost\r\nx-auth: ${bob}\r\ncontent-length: ${4 * 1024 * 1024}\r\n\r\n` +
        'x'.repeat(300 * 1024),
    );
    expect(text).toBe('');
    // The server lets go of the request and its staging file once it hears of the close.
    const left = async () => (await fs.readdir(path.join(app.root, 'bob'))).length;
    while ((await left()) > 0) await new Promise((r) => setImmediate(r));
    expect(await fs.readdir(path.join(app.root, 'bob'))).toEqual([]);
  });

  it('keeps a slow upload whose bytes keep coming, however long it takes in all', async () => {
    const { app, port, bob } = await start({ headersTimeout: 3600, idleTimeout: 2 });
    const slow = await connect(port);
    slow.write(
      `POST /api/resources/slow.bin HTTP/1.1\r\nhost: localhost\r\nx-auth: ${bob}\r\ntransfer-encoding: chunked\r\n\r\n`,
    );
    const answer = exchange(slow);
    // A witness that stops sending at the start: its close proves an idle timeout has gone by.
    const witness = await connect(port);
    const witnessClosed = exchange(
      witness,
      `POST /api/resources/witness.bin HTTP/1.1\r\nhost: localhost\r\nx-auth: ${bob}\r\ncontent-length: 10\r\n\r\nab`,
    );
    let closed = false;
    witnessClosed.then(
      () => (closed = true),
      () => undefined,
    );
    // One byte per turn of the event loop until then: slow, but never idle.
    let sent = 0;
    while (!closed) {
      await new Promise((resolve) => slow.write('1\r\nx\r\n', resolve));
      sent++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    slow.write('0\r\n\r\n');
    const res = await answer;
    expect(res.status).toBe(200);
    expect((await fs.stat(path.join(app.root, 'bob', 'slow.bin'))).size).toBe(sent);
  });

  it('never cuts a request the server itself is slow to answer', async () => {
    const { app, port, bob } = await start({ headersTimeout: 3600, idleTimeout: 1 });
    // Every thread of libuv's pool waits to open a named pipe for reading: the listing's
    // file-system calls wait behind them until a writer opens it.
    const fifo = path.join(app.base, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const blocked = Array.from({ length: threadPoolSize() }, () => fs.open(fifo, 'r'));
    let release = () => fsSync.closeSync(fsSync.openSync(fifo, 'w'));
    try {
      const listing = exchange(await connect(port), get('/api/resources/', bob));
      let answered = false;
      listing.then(
        () => (answered = true),
        () => undefined,
      );
      // A witness connection that sends nothing: its close proves an idle timeout has gone by.
      const witness = await exchange(await connect(port, '127.0.0.2'));
      expect(witness.closed).toBe(true);
      expect(answered, 'the listing waited for the pool').toBe(false);
      release();
      release = () => undefined;
      const res = await listing;
      expect(res.status).toBe(200);
    } finally {
      release();
      for (const fh of await Promise.all(blocked)) await fh.close();
    }
  });
});

describe('the HTTPS server of --cert', () => {
  let dir: string | undefined;
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('has the same caps, and its early answers reach the client too', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-tls-'));
    const at = (name: string) => path.join(dir!, name);
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'],
        ...['-keyout', at('key.pem'), '-out', at('cert.pem')],
      ],
      { stdio: 'ignore' },
    );
    await fs.mkdir(at('files'));
    const port = await freePort();
    const quiet = () => undefined;
    running = await serve(
      {
        database: at('fb.db'),
        root: at('files'),
        address: '127.0.0.1',
        port,
        cert: at('cert.pem'),
        key: at('key.pem'),
        log: '',
        trustedProxies: [],
        maxConnectionsPerAddress: 2,
      },
      { out: quiet, err: quiet, env: {}, places: { cwd: dir, home: dir }, ownsProcess: false },
    );
    // Two TCP connections that never start their handshake hold the address's places.
    const held = [await connect(port), await connect(port)];
    const over = await untilClosed(await connect(port));
    expect(over).toBe('');
    for (const socket of held) socket.destroy();

    // From another address: an 8 MiB upload without credentials is refused before its body,
    // and the answer arrives whole.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          localAddress: '127.0.0.2',
          method: 'PUT',
          path: '/api/resources/a.bin',
          rejectUnauthorized: false,
          headers: { 'content-length': String(8 * 1024 * 1024) },
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.end(Buffer.alloc(8 * 1024 * 1024, 'x'));
    });
    expect(answer).toEqual({ status: 401, body: '401 Unauthorized\n' });
  });
});

describe('the limits in the configuration', () => {
  it('come from flags, FB_* variables and the config file, with the documented defaults', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-limits-'));
    try {
      const places = { cwd: dir, home: dir, systemDir: dir };
      const defaults = loadConfig([], {}, places);
      expect(defaults).toMatchObject({
        maxConnections: 4096,
        maxConnectionsPerAddress: 128,
        headersTimeout: 30,
        idleTimeout: 75,
      });
      expect(
        loadConfig(
          ['--maxConnections', '100', '--maxConnectionsPerAddress', '10', '--headersTimeout', '5s'],
          { FB_IDLE_TIMEOUT: '2m' },
          places,
        ),
      ).toMatchObject({
        maxConnections: 100,
        maxConnectionsPerAddress: 10,
        headersTimeout: 5,
        idleTimeout: 120,
      });
      // Saved in the database as the other server options are, and read back.
      const record = serverRecordFromConfig({ ...defaults, idleTimeout: 90, maxConnections: 50 });
      expect(record).toMatchObject({ idleTimeout: '1m30s', maxConnections: 50, headersTimeout: '30s' });
      expect(loadConfig([], {}, { ...places, persisted: record })).toMatchObject({
        idleTimeout: 90,
        maxConnections: 50,
      });
      await fs.writeFile(
        path.join(dir, '.filebrowser.json'),
        JSON.stringify({ maxConnectionsPerAddress: 3, idleTimeout: '10s' }),
      );
      expect(loadConfig([], { FB_MAX_CONNECTIONS_PER_ADDRESS: '7' }, places)).toMatchObject({
        maxConnectionsPerAddress: 7,
        idleTimeout: 10,
      });
      for (const bad of [
        ['--maxConnections', '0'],
        ['--headersTimeout', '0s'],
        ['--idleTimeout', 'soon'],
      ]) {
        expect(() => loadConfig(bad, {}, places)).toThrow();
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
