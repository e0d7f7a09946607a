import { defineConfig } from 'vitest/config';

// Browser journeys: one Chromium, one real server per file, run one file at a time (2 cores).
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
