import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';
import { haveTool } from './tools.js';

/**
 * Debian's litmus, the WebDAV server test suite, against a real listening server: every suite
 * (basic, copymove, props, locks, http) must report zero failures and no warnings.
 */
const SUITES = ['basic', 'copymove', 'props', 'locks', 'http'] as const;

/** Runs one suite; litmus writes debug.log and child.log into its working folder, a temporary one here. */
function litmus(url: string, suite: string, cwd: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      'litmus',
      [url, 'litmus', USER_PASSWORD],
      { cwd, env: { ...process.env, TESTS: suite }, timeout: 120_000 },
      (_err, stdout, stderr) => resolve(stdout + stderr),
    );
  });
}

/** `<- summary for `basic': of 16 tests run: 16 passed, 0 failed. 100.0%` */
function summary(output: string, suite: string): { run: number; failed: number } | undefined {
  const m = new RegExp(`summary for \`${suite}': of (\\d+) tests run: (\\d+) passed, (\\d+) failed`).exec(
    output,
  );
  return m ? { run: Number(m[1]), failed: Number(m[3]) } : undefined;
}

describe.runIf(haveTool('litmus', 'runs the WebDAV protocol suites'))('litmus', () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await startTestApp();
    await t.createUser({ username: 'litmus', scope: '/' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/dav/`;
  });
  afterAll(() => t.close());

  for (const suite of SUITES) {
    it(`passes the ${suite} suite with no failures`, async () => {
      const output = await litmus(url, suite, t.outside);
      const result = summary(output, suite);
      if (process.env.LITMUS_LOG) console.log(output);
      expect(result, output).toBeDefined();
      expect(result!.failed, output).toBe(0);
      expect(result!.run).toBeGreaterThan(0);
      // Warnings are litmus's word for a SHOULD not kept (412 where 423 was sent, and the like).
      expect(output, output).not.toMatch(/WARNING/);
    }, 180_000);
  }
});
