import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../packages/server/src/app.js';
import { hashPassword } from '../../packages/server/src/auth/passwords.js';
import { defaultConfig } from '../../packages/server/src/config/defaults.js';
import type { ServerConfig } from '../../packages/server/src/config/types.js';
import type { ServerContext } from '../../packages/server/src/services.js';
import { quickSetup } from '../../packages/server/src/setup.js';
import { openStore } from '../../packages/server/src/store/index.js';

export const ADMIN = { username: 'admin', password: 'e2e-admin-password' };

export interface RunningServer {
  url: string;
  root: string;
  ctx: ServerContext;
  stop(): Promise<void>;
}

const webDist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/web/dist');

/**
 * The real server on a temporary folder and database, serving the built web app on a free
 * loopback port. `npm run test:e2e` builds the app first.
 */
export async function startServer(overrides: Partial<ServerConfig> = {}): Promise<RunningServer> {
  try {
    await fs.access(path.join(webDist, 'index.html'));
  } catch {
    throw new Error('the web app is not built: run `npm run build` first');
  }
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-e2e-'));
  const root = path.join(base, 'files');
  await fs.mkdir(root);
  const config: ServerConfig = {
    ...defaultConfig(),
    root,
    database: path.join(base, 'filebrowser.db'),
    cacheDir: path.join(base, 'cache'),
    webDist,
    port: 0,
    bcryptCost: 4,
    ...overrides,
  };
  const store = await openStore(config.database);
  const { app, ctx } = await buildApp(config, store);
  await quickSetup(ctx, {
    username: ADMIN.username,
    passwordHash: await hashPassword(ADMIN.password, 4),
    noauth: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    root,
    ctx,
    stop: async () => {
      await app.close();
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    },
  };
}
