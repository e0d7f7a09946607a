import { defineConfig } from 'vitest/config';

// One config for the unit, component and API tiers; the browser tier lives in e2e/ with its own.
// The time limits are a safety net against a hung test, never a measure: CI machines are often so
// busy that a component test which takes 50 ms here takes several seconds there. A poll waits for
// something that will happen: its limit too is a safety net (the default is 1 s).
const limits = { testTimeout: 30_000, hookTimeout: 30_000, expect: { poll: { timeout: 30_000 } } };

export default defineConfig({
  test: {
    // Most of these tests wait on real servers, sockets, child processes and the disk rather than
    // on the CPU: three files at a time keep two cores busy where one at a time left them idle.
    maxWorkers: 3,
    projects: [
      {
        test: {
          name: 'contract',
          root: 'packages/contract',
          include: ['src/**/*.test.ts'],
          ...limits,
        },
      },
      {
        test: {
          name: 'server',
          root: 'packages/server',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          setupFiles: ['test/setup-pins.ts'],
          ...limits,
          // Reader threads run src/files/listing/dir-reader-worker.ts in a worker, loaded by Node rather
          // than by vitest: these hooks compile it (workers inherit the option).
          execArgv: ['--import', new URL('packages/server/test/ts-register.mjs', import.meta.url).href],
        },
      },
      {
        // The listing, anchor, search and security tests again with the native addon off
        // (FB_NATIVE=off, docs/configuration.md): the JavaScript way of reading folders, taken
        // wherever the addon is missing, stays tested where the addon is built.
        test: {
          name: 'server-js',
          root: 'packages/server',
          include: [
            'src/files/listing/native.test.ts',
            'src/files/listing/listing.test.ts',
            'src/files/access/anchor.test.ts',
            'src/files/search/search.test.ts',
            'test/security-swap.test.ts',
            'test/security-catalogue.test.ts',
            'test/security-catalogue-shares.test.ts',
            'test/files-resources.test.ts',
            'test/files-long-names.test.ts',
          ],
          env: { FB_NATIVE: 'off' },
          setupFiles: ['test/setup-pins.ts'],
          ...limits,
          execArgv: ['--import', new URL('packages/server/test/ts-register.mjs', import.meta.url).href],
        },
      },
      {
        // The command runner's tests again without its sandbox (FB_TEST_EXEC_SANDBOX=off, see
        // test/tools.ts): the way a server without bubblewrap runs commands stays tested.
        test: {
          name: 'server-nosandbox',
          root: 'packages/server',
          include: [
            'test/command-websocket.test.ts',
            'test/command-websocket-process.test.ts',
            'test/security-runner.test.ts',
          ],
          env: { FB_TEST_EXEC_SANDBOX: 'off' },
          setupFiles: ['test/setup-pins.ts'],
          ...limits,
          execArgv: ['--import', new URL('packages/server/test/ts-register.mjs', import.meta.url).href],
        },
      },
      {
        // The API tests that lean on the store again on PostgreSQL (FB_TEST_DATABASE=postgres, see
        // test/helpers.ts): a throw-away cluster for the run (test/postgres/global-setup.ts), a
        // database per test app.
        test: {
          name: 'server-postgres',
          root: 'packages/server',
          include: [
            'test/auth.test.ts',
            'test/users.test.ts',
            'test/settings.test.ts',
            'test/shares.test.ts',
            'test/public-shares.test.ts',
            'test/api-tokens.test.ts',
            'test/trash.test.ts',
            'test/audit.test.ts',
            'test/audit-reading.test.ts',
            'test/quota.test.ts',
            'test/security-quota-race.test.ts',
            'test/tus.test.ts',
            'test/jobs.test.ts',
            'test/moves.test.ts',
            'test/staging.test.ts',
            'test/webdav.test.ts',
            'test/security-webdav-locks.test.ts',
            'test/security-tokens.test.ts',
            'test/instances.test.ts',
            'test/postgres-outage.test.ts',
            'test/security-accounts.test.ts',
            'test/security-homes.test.ts',
            'test/command-websocket.test.ts',
          ],
          env: { FB_TEST_DATABASE: 'postgres' },
          globalSetup: ['test/postgres/global-setup.ts'],
          setupFiles: ['test/setup-pins.ts'],
          ...limits,
          execArgv: ['--import', new URL('packages/server/test/ts-register.mjs', import.meta.url).href],
        },
      },
      {
        test: {
          name: 'web',
          root: 'packages/web',
          include: ['src/**/*.test.{ts,tsx}'],
          environment: 'happy-dom',
          setupFiles: ['src/test/setup.ts'],
          ...limits,
        },
      },
    ],
  },
});
