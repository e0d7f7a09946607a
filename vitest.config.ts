import { defineConfig } from 'vitest/config';

// One config for the unit, component and API tiers; the browser tier lives in e2e/ with its own.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'contract',
          root: 'packages/contract',
          include: ['src/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'server',
          root: 'packages/server',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          setupFiles: ['test/setup-pins.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          // Reader threads run src/files/dir-reader-worker.ts in a worker, loaded by Node rather
          // than by vitest: these hooks compile it (workers inherit the option).
          execArgv: ['--import', new URL('packages/server/test/ts-register.mjs', import.meta.url).href],
        },
      },
      {
        test: {
          name: 'web',
          root: 'packages/web',
          include: ['src/**/*.test.{ts,tsx}'],
          environment: 'happy-dom',
        },
      },
    ],
  },
});
