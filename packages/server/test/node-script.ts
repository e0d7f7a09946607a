import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';

const TS_HOOKS = new URL('./ts-register.mjs', import.meta.url).href;

/**
 * Runs an ES module script in a node process of its own (so that its heap, flags and collections
 * are its own: the memory tests), with the project's TypeScript importable, and answers what it
 * printed as JSON. The script must write nothing to stderr and end with status 0.
 */
export function runNodeScript<T>(
  script: string,
  nodeFlags: readonly string[] = [],
  options: { env?: NodeJS.ProcessEnv; maxBuffer?: number } = {},
): T {
  const r = spawnSync(
    process.execPath,
    [...nodeFlags, '--import', TS_HOOKS, '--input-type=module', '-e', script],
    { encoding: 'utf8', ...options },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as T;
}
