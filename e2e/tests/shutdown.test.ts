import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtServer } from '../support/built.js';
import { slowRequest, type CollectedAnswer } from '../support/slow-request.js';
import { freePort } from '../../packages/server/test/tools.js';

/**
 * SIGTERM stops accepting, lets the downloads and uploads in flight finish
 * within the grace period, then cuts the rest and closes the database; a second signal exits at
 * once. A real server process of the built command; every wait is for an event (a console line,
 * a socket event, the exit), never for a time.
 */
const main = builtServer();

let dir: string;
let env: NodeJS.ProcessEnv;
const running: ChildProcess[] = [];
const clients: net.Socket[] = [];
const BIG = 64 * 1024 * 1024;
let bigHash: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-shutdown-'));
  fs.mkdirSync(path.join(dir, 'files'));
  fs.mkdirSync(path.join(dir, 'home'));
  // Big enough that a client that does not read holds the download in flight: more than every
  // socket and stream buffer on the way can take.
  const big = crypto.randomBytes(BIG);
  bigHash = crypto.createHash('sha256').update(big).digest('hex');
  fs.writeFileSync(path.join(dir, 'files', 'big.bin'), big);
  env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FB_')));
  env.HOME = path.join(dir, 'home');
});
afterEach(() => {
  for (const socket of clients.splice(0)) socket.destroy();
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Server {
  child: ChildProcess;
  port: number;
  /** The administrator's session token. */
  token: string;
  /** Resolves with the first match of `re` in stderr, now or later. */
  stderrLine(re: RegExp): Promise<string>;
  exited: Promise<number | null>;
}

/** Starts the server, waits until it listens and signs the administrator in. */
async function start(args: string[], extraEnv: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [main, '-d', 'db/fb.db', '-r', 'files', '-a', '127.0.0.1', '-p', String(port), '-l', '', ...args],
    { cwd: dir, env: { ...env, ...extraEnv } },
  );
  running.push(child);
  let out = '';
  let err = '';
  const waiters: Array<{ re: RegExp; resolve: (line: string) => void }> = [];
  const check = () => {
    for (const w of [...waiters]) {
      const m = w.re.exec(err);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m[0]);
      }
    }
  };
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    check();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`exited with ${code}; stdout: ${out} stderr: ${err}`)));
    child.stdout!.on('data', () => {
      if (/Listening on /.test(out)) resolve();
    });
  });
  // Only the first start prints the administrator's password: the tests sign in there.
  const password = /password: (\S+)/.exec(out)?.[1];
  let token = '';
  if (password) {
    const login = await fetch(`http://127.0.0.1:${port}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
    token = await login.text();
  }
  return {
    child,
    port,
    token,
    exited,
    stderrLine: (re) =>
      new Promise((resolve, reject) => {
        waiters.push({ re, resolve });
        check();
        void exited.then(() => {
          // Output may arrive in the same turn as the exit: look once more before giving up.
          check();
          if (waiters.some((w) => w.re === re)) reject(new Error(`no ${re} in stderr: ${err}`));
        });
      }),
  };
}

/** A download the client does not read yet: resolves once the answer's headers are in. */
interface SlowDownload {
  res: http.IncomingMessage;
  /** Reads the rest; resolves with the whole body, rejects if it is cut. */
  finish(): Promise<Buffer>;
  /** Reads what is left until the connection ends, whole or cut. */
  readRest(): Promise<{ received: number; complete: boolean }>;
}

function slowDownload({ port, token }: Server): Promise<SlowDownload> {
  return new Promise((resolve, reject) => {
    const headers = { 'x-auth': token };
    const req = http.get(
      { host: '127.0.0.1', port, path: '/api/raw/big.bin', agent: false, headers },
      (res) => {
        res.pause();
        if (res.statusCode !== 200) reject(new Error(`download answered ${res.statusCode}`));
        clients.push(res.socket);
        resolve({
          res,
          readRest: () =>
            new Promise((done) => {
              let received = 0;
              res.on('data', (c: Buffer) => (received += c.length));
              res.on('error', () => undefined);
              res.on('close', () => done({ received, complete: res.complete }));
              res.resume();
            }),
          finish: () =>
            new Promise((done, fail) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => done(Buffer.concat(chunks)));
              res.on('error', fail);
              res.resume();
            }),
        });
      },
    );
    req.on('error', reject);
  });
}

/** An upload whose body has only begun: resolves once the server has the request (its first bytes are in). */
async function slowUpload(
  { port, token }: Server,
  size: number,
): Promise<{ rest(): Promise<CollectedAnswer> }> {
  const first = Buffer.alloc(64 * 1024, 'a');
  const upload = slowRequest({
    port,
    token,
    method: 'POST',
    path: '/api/resources/upload.bin',
    length: size,
    // The server's 100 Continue tells that it has the request: only then is it in flight.
    headers: { expect: '100-continue' },
    sockets: clients,
  });
  await new Promise<void>((resolve) => upload.req.once('continue', () => resolve()));
  await upload.send(first);
  return { rest: () => upload.end(Buffer.alloc(size - first.length, 'b')) };
}

/** Whether a new connection is refused (the server no longer listens). */
function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('SIGKILL', () => {
  it('in the middle of an upload leaves a staging file that the next start removes', async () => {
    const files = path.join(dir, 'files');
    const isStaging = (name: string) => /^\..*\.fb-[0-9a-f]{12}\.tmp$/.test(name);
    const server = await start([]);
    // Watched before the upload starts, so the staging file's creation cannot be missed.
    const watcher = fs.watch(files);
    const staged = new Promise<string>((resolve) => {
      watcher.on('change', (_event, name) => {
        if (isStaging(String(name))) resolve(String(name));
      });
    });
    try {
      await slowUpload(server, 1024 * 1024);
      const name = await staged;
      server.child.kill('SIGKILL');
      await server.exited;
      expect(fs.readdirSync(files)).toContain(name);
    } finally {
      watcher.close();
    }

    const again = await start(['--shutdownGrace', '0']);
    // The sweep runs before the server listens.
    expect(fs.readdirSync(files)).toEqual(['big.bin']);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  });
});

describe('SIGTERM', () => {
  it('stops accepting, lets a slow download and a slow upload finish, closes the database and exits 0', async () => {
    const server = await start(['--shutdownGrace', '600']);
    const download = await slowDownload(server);
    const upload = await slowUpload(server, 1024 * 1024);

    server.child.kill('SIGTERM');
    await server.stderrLine(
      /Stopped accepting connections; waiting up to 600 s for \d+ open connections? to finish\./,
    );
    expect(await connectionRefused(server.port)).toBe(true);

    const uploaded = await upload.rest();
    expect(uploaded.status).toBe(200);
    const got = await download.finish();
    expect(got.length).toBe(BIG);
    expect(crypto.createHash('sha256').update(got).digest('hex')).toBe(bigHash);
    expect(await server.exited).toBe(0);

    await server.stderrLine(/Closed the database\./);
    const written = fs.readFileSync(path.join(dir, 'files', 'upload.bin'));
    expect(written.length).toBe(1024 * 1024);
    expect(written.subarray(64 * 1024).every((b) => b === 'b'.charCodeAt(0))).toBe(true);
    // Closed cleanly: the write-ahead log was checkpointed into the database and removed.
    expect(fs.existsSync(path.join(dir, 'db', 'fb.db-wal'))).toBe(false);
    expect(fs.readdirSync(path.join(dir, 'files')).sort()).toEqual(['big.bin', 'upload.bin']);
  });

  it('cuts what is still open when the grace period (FB_SHUTDOWN_GRACE) is over, then exits 0', async () => {
    const server = await start([], { FB_SHUTDOWN_GRACE: '1' });
    const download = await slowDownload(server);
    await slowUpload(server, 1024 * 1024);

    server.child.kill('SIGTERM');
    await server.stderrLine(/waiting up to 1 s for \d+ open connections? to finish\./);
    await server.stderrLine(/The grace period of 1 s is over: closed \d+ connections? still open\./);
    // The client reads again only now: the connection was cut before it could have had it all.
    const rest = await download.readRest();
    expect(rest.complete).toBe(false);
    expect(rest.received).toBeLessThan(BIG);
    expect(await server.exited).toBe(0);
    await server.stderrLine(/Closed the database\./);
    expect(fs.existsSync(path.join(dir, 'db', 'fb.db-wal'))).toBe(false);
    // The cut upload left neither a file nor its staging file.
    expect(fs.readdirSync(path.join(dir, 'files'))).toEqual(['big.bin']);
  });

  it('exits at once on a second signal, without waiting for the grace period', async () => {
    const server = await start(['--shutdownGrace', '600']);
    const download = await slowDownload(server);

    server.child.kill('SIGTERM');
    await server.stderrLine(/waiting up to 600 s for \d+ open connections? to finish\./);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(1);
    await server.stderrLine(/Received SIGTERM again, exiting at once\./);
    const rest = await download.readRest();
    expect(rest.complete).toBe(false);
    expect(rest.received).toBeLessThan(BIG);
  });

  it('with nothing in flight, stops at once whatever the grace period', async () => {
    const server = await start(['--shutdownGrace', '600']);
    server.child.kill('SIGINT');
    await server.stderrLine(/Stopped accepting connections/);
    expect(await server.exited).toBe(0);
    await server.stderrLine(/Closed the database\./);
  });
});
