import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { UserInput } from '@filebrowser/contract';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type BuildOptions } from '../src/app.js';
import { createAccount } from '../src/auth/accounts.js';
import { defaultConfig } from '../src/config/defaults.js';
import type { ServerConfig } from '../src/config/types.js';
import type { ServerContext } from '../src/services.js';
import { quickSetup } from '../src/setup.js';
import { inject } from 'vitest';
import { openStore } from '../src/store/index.js';
import { createDatabase } from './postgres/cluster.js';
import type { StoredUser } from '../src/store/users.js';
import { answerCheck } from './openapi-check.js';
import { testExecSandbox } from './tools.js';

export const ADMIN_PASSWORD = 'admin-password-for-tests';
export const USER_PASSWORD = 'user-password-for-tests';
/** bcrypt's lowest cost, for the test apps only (a configured server refuses less than 10). */
export const TEST_BCRYPT_COST = 4;

export interface TestApp {
  app: FastifyInstance;
  ctx: ServerContext;
  /** The served root: a fresh temporary folder. */
  root: string;
  /** A temporary folder outside the root, for escape tests. */
  outside: string;
  dbFile: string;
  /** Token of the quick-setup administrator "admin". */
  adminToken: string;
  login(username: string, password?: string): Promise<string>;
  /** Creates a user through the accounts service (password USER_PASSWORD unless given). */
  createUser(data: UserInput & { username: string }, password?: string): Promise<StoredUser>;
  /** app.inject with X-Auth set from `token`. */
  request(token: string | undefined, opts: InjectOptions): Promise<LightMyRequestResponse>;
  /** The admin's `PUT /api/users/:id` of the fields `which`, as the user form sends it. */
  updateUser(id: number, which: string[], data: Record<string, unknown>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** A real app on a temporary folder and a temporary SQLite file. Nothing is mocked. */
export async function startTestApp(
  overrides: Partial<ServerConfig> = {},
  buildOptions: BuildOptions = {},
): Promise<TestApp> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-test-'));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  await fs.mkdir(root);
  await fs.mkdir(outside);
  const dbFile = path.join(base, 'db', 'filebrowser.db');
  const config: ServerConfig = {
    ...defaultConfig(),
    root,
    database: dbFile,
    cacheDir: path.join(base, 'cache'),
    webDist: path.join(base, 'web'),
    // the lowest cost bcrypt takes: every test app hashes passwords, the loader refuses it
    bcryptCost: TEST_BCRYPT_COST,
    execSandbox: testExecSandbox(),
    ...overrides,
  };
  // The server-postgres project runs these tests on PostgreSQL: a database of their own each.
  const database =
    process.env.FB_TEST_DATABASE === 'postgres' ? await createDatabase(inject('postgresAdminUrl')) : dbFile;
  if (database !== dbFile) config.database = database;
  const store = await openStore(database);
  const check = answerCheck();
  const { app, ctx } = await buildApp(config, store, { onSend: check.onSend, ...buildOptions });
  check.install(app);
  const { hashPassword } = await import('../src/auth/passwords.js');
  await quickSetup(ctx, {
    username: 'admin',
    passwordHash: await hashPassword(ADMIN_PASSWORD, TEST_BCRYPT_COST),
    noauth: false,
  });
  // Tests log in many times from one address; the limiter itself has its own tests.
  await app.ready();

  const login = async (username: string, password = USER_PASSWORD) => {
    const res = await app.inject({ method: 'POST', url: '/api/login', payload: { username, password } });
    if (res.statusCode !== 200) throw new Error(`login of ${username} failed: ${res.statusCode} ${res.body}`);
    return res.body;
  };
  const adminToken = await login('admin', ADMIN_PASSWORD);

  const request: TestApp['request'] = (token, opts) =>
    app.inject({ ...opts, headers: { ...(token ? { 'x-auth': token } : {}), ...opts.headers } });
  return {
    app,
    ctx,
    root,
    outside,
    dbFile,
    adminToken,
    login,
    createUser: (data, password = USER_PASSWORD) => createAccount(ctx, data, password, 'cli'),
    request,
    updateUser: (id, which, data) =>
      request(adminToken, {
        method: 'PUT',
        url: `/api/users/${id}`,
        payload: { what: 'user', which, current_password: ADMIN_PASSWORD, data: { id, ...data } },
      }),
    close: async () => {
      await app.close();
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    },
  };
}
