import { execFileSync } from 'node:child_process';

/**
 * Whether a system tool a test needs is installed. Elsewhere a missing tool skips the test with a
 * printed reason; in CI (`CI=true`) it fails the run instead, so a test never passes by not running.
 */
export function haveTool(name: string, why: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    const message = `${name} is not installed: ${why}`;
    if (process.env.CI === 'true') throw new Error(`${message} (CI must have it; see .ci/run)`);
    console.warn(`skipped: ${message}`);
    return false;
  }
}
