import { defineConfig } from 'vitest/config';

// Browser journeys: one Chromium, one real server per file. Two files at a time: most of a
// journey is waiting on the browser and the server, so two cores take two of them.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A poll waits for something the page will show: its limit is a safety net against a hung
    // test, never a measure. The default (1 s) failed a page that rendered 100 items slowly on
    // a busy machine.
    expect: { poll: { timeout: 30_000 } },
    maxWorkers: 2,
  },
});
