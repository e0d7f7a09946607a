import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { createAccount } from '../src/auth/accounts.js';
import { hashPassword } from '../src/auth/passwords.js';
import { defaultConfig } from '../src/config/defaults.js';
import type { ServerConfig } from '../src/config/types.js';
import type { ServerContext } from '../src/services.js';
import { quickSetup } from '../src/setup.js';
import type { StoredSettings } from '../src/store/settings.js';
import { openStore, type Store } from '../src/store/index.js';
import type { StoredUser } from '../src/store/users.js';
import { testExecSandbox } from './tools.js';

/**
 * What the command WebSocket's tests share: a real server on a port, test-only programs, and
 * commands run over the socket.
 */

export const PASSWORD = 'user-password-for-tests';

/** Test-only programs, in a PATH folder of their own (sh is deny-listed, scripts are not). */
export const HELPERS: Record<string, string> = {
  // Prints each argument on its own line, in brackets, so word boundaries show.
  printargs: 'for a in "$@"; do printf "[%s]\\n" "$a"; done',
  interleave: 'echo out1; sleep 0.2; echo err1 >&2; sleep 0.2; echo out2; sleep 0.2; echo err2 >&2',
  fail: 'echo bad >&2; exit 3',
  // Leaves a child in its process group, then waits. Its argument, the child's sleep time, marks
  // both processes: in the sandbox their PIDs are the sandbox's own, so tests find them by it.
  spawner: 'sleep "${1:-30}" & echo started; wait',
};

export interface Server {
  app: FastifyInstance;
  ctx: ServerContext & { config: ServerConfig };
  store: Store;
  base: string;
  root: string;
  outside: string;
  bin: string;
  url: string;
  port: number;
}

/**
 * A real app listening on a loopback port, with the command routes (registered here until app.ts
 * does).
 */
export async function startServer(): Promise<Server> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-command-'));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  const bin = path.join(base, 'bin');
  await Promise.all([root, outside, bin].map((d) => fs.mkdir(d)));
  for (const [name, body] of Object.entries(HELPERS)) {
    await fs.writeFile(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  }
  const dbFile = path.join(base, 'db', 'filebrowser.db');
  const config: ServerConfig = {
    ...defaultConfig(),
    root,
    database: dbFile,
    cacheDir: path.join(base, 'cache'),
    webDist: path.join(base, 'web'),
    disableExec: false,
    execPath: `${bin}:/usr/bin:/bin`,
    execSandbox: testExecSandbox(),
  };
  const store = await openStore(dbFile);
  const { app, ctx } = await buildApp(config, store);
  await quickSetup(ctx, { username: 'admin', passwordHash: await hashPassword(PASSWORD), noauth: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  return {
    app,
    ctx: ctx as Server['ctx'],
    store,
    base,
    root,
    outside,
    bin,
    port,
    url: `ws://127.0.0.1:${port}`,
  };
}

export interface Outcome {
  /** HTTP status when the upgrade was refused. */
  status?: number;
  lines: string[];
  code?: number;
  reason?: string;
}

export interface RunOptions {
  headers?: Record<string, string>;
  origin?: string;
  /** Messages to send on open (default: the command line). */
  messages?: string[];
  /** Called with each received line; may act on the socket. */
  onLine?: (line: string, ws: WebSocket) => void;
  /** Close the socket as soon as the messages are sent, before any answer. */
  closeAfterSend?: boolean;
}

export function run(url: string, line: string | undefined, opts: RunOptions = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: opts.headers, origin: opts.origin });
    const lines: string[] = [];
    ws.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode, lines });
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      for (const m of opts.messages ?? (line === undefined ? [] : [line])) ws.send(m);
      if (opts.closeAfterSend) ws.close();
    });
    ws.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      lines.push(text);
      opts.onLine?.(text, ws);
    });
    ws.on('close', (code, reason) => resolve({ lines, code, reason: reason.toString() }));
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

/** Running: it exists and is not a zombie waiting for its new parent to reap it. */
export async function pidAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** A number for `spawner` to sleep, unique to one test: it marks that test's processes. */
export function marker(): string {
  return `30.${String(crypto.randomInt(1_000_000)).padStart(6, '0')}`;
}

/**
 * Running processes (the leader shell, its sleep, the sandbox around them) whose arguments hold
 * `mark`.
 */
export async function marked(mark: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await fs.readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(mark) && (await pidAlive(Number(name)))) found.push(Number(name));
  }
  return found;
}

export async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

export let s: Server;
export let bob: StoredUser;
export let bobToken: string;
export let bobDir: string;

export const login = async (username: string) => {
  const res = await s.app.inject({
    method: 'POST',
    url: '/api/login',
    payload: { username, password: PASSWORD },
  });
  expect(res.statusCode).toBe(200);
  return res.body;
};
export const as = (token: string) => ({ headers: { 'x-auth': token } });
export const setCommands = async (commands: string[]) => {
  bob = await s.store.users.update({ ...(await s.store.users.get(bob.id))!, commands });
};
export const saveSettings = async (patch: Partial<StoredSettings>) =>
  await s.store.settings.save({ ...s.store.settings.get(), ...patch });

/**
 * Starts a server with bob (execute, an empty command list) and another user's secret before the
 * tests of the suite that calls it; gives each test a fresh scope folder and the default runner
 * settings.
 */
export function useCommandServer(): void {
  beforeAll(async () => {
    s = await startServer();
    bob = await createAccount(
      s.ctx,
      {
        username: 'bob',
        scope: '/users/bob',
        perm: {
          admin: false,
          execute: true,
          create: true,
          rename: true,
          modify: true,
          delete: true,
          share: true,
          download: true,
        },
        commands: [],
      },
      PASSWORD,
      'cli',
    );
    bobToken = await login('bob');
    bobDir = await fs.realpath(path.join(s.root, 'users/bob'));
    await fs.writeFile(path.join(s.outside, 'secret.txt'), 'outside secret\n');
    await fs.mkdir(path.join(s.root, 'users/alice'), { recursive: true });
    await fs.writeFile(path.join(s.root, 'users/alice/secret.txt'), 'alice secret\n');
  });
  afterAll(async () => {
    await s.app.close();
    await s.store.close();
    await fs.rm(s.base, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await setCommands([
      'echo',
      'printargs',
      'ls',
      'cat',
      'pwd',
      'find',
      'sleep',
      'interleave',
      'fail',
      'spawner',
      'yes',
    ]);
    s.ctx.config.disableExec = false;
    s.ctx.config.execTimeLimit = defaultConfig().execTimeLimit;
    s.ctx.config.execOutputLimit = defaultConfig().execOutputLimit;
    s.ctx.config.execPath = `${s.bin}:/usr/bin:/bin`;
    await saveSettings({ unsafeCommands: [], rules: [] });
    // A fresh scope folder for each test, so "creates nothing" can be checked by listing it.
    await fs.rm(bobDir, { recursive: true, force: true });
    await fs.mkdir(bobDir, { recursive: true });
    await fs.writeFile(path.join(bobDir, 'hello.txt'), 'hello\n');
  });
}

/** Keeps `bob` as a test changed the account (the next `setCommands` starts from it). */
export function setBob(value: StoredUser): void {
  bob = value;
}
