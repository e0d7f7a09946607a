import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { hashPassword } from '../src/auth/passwords.js';
import { defaultConfig } from '../src/config/defaults.js';
import type { ServerConfig } from '../src/config/types.js';
import type { ServerContext } from '../src/services.js';
import { quickSetup } from '../src/setup.js';
import { openStore, type Store } from '../src/store/index.js';
import { TEST_BCRYPT_COST } from './helpers.js';

/**
 * What the runner's sandbox and quota tests share: a real server with the runner on, in File
 * Browser's default layout, and commands run over its WebSocket.
 */

export const PASSWORD = 'user-password-for-tests';
export const MARKERS = {
  trash: 'TRASHED-MARKER-7d1f',
  staged: 'STAGED-MARKER-91ac',
  cache: 'CACHE-MARKER-3b2e',
};
export const PERM = {
  admin: false,
  execute: true,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};

export interface Server {
  app: FastifyInstance;
  ctx: ServerContext;
  store: Store;
  base: string;
  root: string;
  url: string;
}

export type Mode = 'bwrap' | 'off';

/** The server as File Browser's defaults lay it out: `filebrowser.db` inside the served folder. */
export async function startServer(sandbox: Mode, extra: Partial<ServerConfig> = {}): Promise<Server> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-sandbox-')));
  const root = path.join(base, 'root');
  await fs.mkdir(root);
  const dbFile = path.join(root, 'filebrowser.db');
  const config = {
    ...defaultConfig(),
    root,
    database: dbFile,
    cacheDir: '',
    webDist: path.join(base, 'web'),
    bcryptCost: TEST_BCRYPT_COST,
    disableExec: false,
    execSandbox: sandbox,
    ...extra,
  } as ServerConfig;
  const store = await openStore(dbFile);
  const { app, ctx } = await buildApp(config, store);
  await quickSetup(ctx, {
    username: 'admin',
    passwordHash: await hashPassword(PASSWORD, TEST_BCRYPT_COST),
    noauth: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { app, ctx, store, base, root, url: `ws://127.0.0.1:${port}` };
}

export async function stopServer(s: Server): Promise<void> {
  await s.app.close();
  await s.store.close();
  await fs.rm(s.base, { recursive: true, force: true });
}

export interface Outcome {
  lines: string[];
  code?: number;
  reason?: string;
}

/** Runs one command line through the command websocket and collects what comes back. */
export function run(s: Server, token: string, line: string, folder = '/'): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${s.url}/api/command${folder}`, { headers: { 'x-auth': token } });
    const lines: string[] = [];
    ws.on('open', () => ws.send(line));
    ws.on('message', (data) => lines.push((data as Buffer).toString('utf8')));
    ws.on('close', (code, reason) => resolve({ lines, code, reason: reason.toString() }));
    ws.on('error', reject);
  });
}

export async function login(s: Server, username: string): Promise<string> {
  const res = await s.app.inject({
    method: 'POST',
    url: '/api/login',
    payload: { username, password: PASSWORD },
  });
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** Every file below `dir` with its bytes (links and special files skipped). */
export async function filesBelow(dir: string): Promise<Array<{ file: string; bytes: Buffer }>> {
  const out: Array<{ file: string; bytes: Buffer }> = [];
  for (const rel of await fs.readdir(dir, { recursive: true })) {
    const file = path.join(dir, rel);
    const st = await fs.lstat(file);
    if (st.isFile()) out.push({ file, bytes: await fs.readFile(file) });
  }
  return out;
}
