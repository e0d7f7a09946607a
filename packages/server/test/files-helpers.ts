import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Permissions, Rule, UserInput } from '@filebrowser/contract';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { RouteIndex } from '../src/http/route-index.js';
import { buildApp, type BuildOptions } from '../src/app.js';
import { createAccount } from '../src/auth/accounts.js';
import { fileAccessFor, type FileAccess } from '../src/files/access/access.js';
import type { Pinned } from '../src/files/access/anchor.js';
import { hashPassword } from '../src/auth/passwords.js';
import { defaultConfig } from '../src/config/defaults.js';
import type { ServerConfig } from '../src/config/types.js';
import type { AppContext } from '../src/context.js';
import type { ServerContext } from '../src/services.js';
import { quickSetup } from '../src/setup.js';
import { openStore } from '../src/store/index.js';
import { answerCheck } from './openapi-check.js';

export const PASSWORD = 'files-password-for-tests';

export const ALL: Permissions = {
  admin: false,
  execute: false,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};

export const deny = (p: string): Rule => ({ regex: false, allow: false, path: p, regexp: null });
export const denyRe = (raw: string): Rule => ({ regex: true, allow: false, path: '', regexp: { raw } });

export interface FilesApp {
  app: FastifyInstance;
  ctx: ServerContext;
  /** Every route the app registered. */
  routes: RouteIndex;
  root: string;
  outside: string;
  base: string;
  /** Creates a user (scope folder created under the root) and returns a token. */
  user(name: string, data?: Partial<UserInput>): Promise<string>;
  req(token: string | undefined, opts: InjectOptions): Promise<LightMyRequestResponse>;
  get(token: string, url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * The window just before a replacing write's, a copy's or a move's rename (the app's
 * `beforeReplace` seam), reached without a clock: `next(act)` runs `act` there, once, as a request
 * answered meanwhile would. Give `build` to the app; `clear()` after each test.
 */
export function renameWindow(): {
  build: BuildOptions;
  /** `act` is given the real path about to be replaced (or made). */
  next(act: ((real: string) => Promise<unknown>) | undefined): void;
  clear(): void;
} {
  let next: ((real: string) => Promise<unknown>) | undefined;
  return {
    build: {
      beforeReplace: async (real) => {
        const act = next;
        next = undefined;
        await act?.(real);
      },
    },
    next: (act) => {
      next = act;
    },
    clear: () => {
      next = undefined;
    },
  };
}

/**
 * The real app on a temporary root and database.
 */
export async function startFilesApp(
  overrides: Partial<ServerConfig> | ((base: string) => Partial<ServerConfig>) = {},
  build: BuildOptions = {},
): Promise<FilesApp> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-files-')));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  await fs.mkdir(root);
  await fs.mkdir(outside);
  const config: ServerConfig = {
    ...defaultConfig(),
    root,
    database: path.join(base, 'db', 'filebrowser.db'),
    cacheDir: path.join(base, 'cache'),
    webDist: path.join(base, 'web'),
    ...(typeof overrides === 'function' ? overrides(base) : overrides),
  };
  const store = await openStore(config.database);
  const check = answerCheck();
  const { app, ctx, routes } = await buildApp(config, store, { onSend: check.onSend, ...build });
  check.install(app);
  await quickSetup(ctx, { username: 'admin', passwordHash: await hashPassword(PASSWORD), noauth: false });
  await app.ready();

  const req = (token: string | undefined, opts: InjectOptions) =>
    app.inject({ ...opts, headers: { ...(token ? { 'x-auth': token } : {}), ...opts.headers } });
  return {
    app,
    ctx,
    routes,
    root,
    outside,
    base,
    user: async (name, data = {}) => {
      const scope = data.scope ?? '/' + name;
      await fs.mkdir(path.join(root, scope), { recursive: true });
      await createAccount(ctx, { perm: ALL, ...data, username: name, scope }, PASSWORD, 'cli');
      const res = await app.inject({
        method: 'POST',
        url: '/api/login',
        payload: { username: name, password: PASSWORD },
      });
      if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
      return res.body;
    },
    req,
    get: (token, url, headers = {}) => req(token, { method: 'GET', url, headers }),
    close: async () => {
      await app.close();
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    },
  };
}

/** A user's file access on `root`, made the one way the server makes it (no app, a real database). */
export interface TestAccess {
  access: FileAccess;
  /** Runs `fn` with the pinned folder at `virtual` (closed afterwards). */
  withFolder<T>(virtual: string, fn: (folder: Pinned) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function testAccess(
  root: string,
  data: { rules?: Rule[]; scope?: string; perm?: Permissions; hideDotfiles?: boolean } = {},
): Promise<TestAccess> {
  const dbDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-access-'));
  const config: ServerConfig = {
    ...defaultConfig(),
    root,
    database: path.join(dbDir, 'filebrowser.db'),
    cacheDir: path.join(dbDir, 'cache'),
  };
  const store = await openStore(config.database);
  const silent = { info() {}, warn() {}, error() {} };
  const ctx = { config, store, log: silent } as unknown as AppContext;
  const user = await createAccount(
    ctx,
    {
      username: 'tester',
      scope: data.scope ?? '/',
      perm: data.perm ?? ALL,
      rules: data.rules ?? [],
      hideDotfiles: data.hideDotfiles ?? false,
      sorting: { by: 'name', asc: false },
    },
    'a-password-for-tests-only',
    'cli',
    { passwordIsHash: true },
  );
  const access = await fileAccessFor(ctx, user);
  return {
    access,
    withFolder: async (virtual, fn) => {
      const o = await access.open(virtual, { rules: false });
      try {
        if (!o.node?.stat.isDirectory()) throw new Error(`${virtual} is not a folder`);
        return await fn(o.node);
      } finally {
        await o.close();
      }
    },
    close: async () => {
      await store.close();
      await fs.rm(dbDir, { recursive: true, force: true });
    },
  };
}
