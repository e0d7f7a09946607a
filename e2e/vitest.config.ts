import { defineConfig } from 'vitest/config';

// Browser journeys: one Chromium, one real server per file. Two files at a time: most of a
// journey is waiting on the browser and the server, so two cores take two of them.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
