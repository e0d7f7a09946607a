import { execFileSync } from 'node:child_process';
import net from 'node:net';

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

/**
 * Mounts a size-limited tmpfs on `dir` (which must exist), for tests of a full or read-only disk.
 * Mounting needs root: elsewhere the test is skipped with a printed reason; in CI (`CI=true`,
 * where tests run as root) a failure fails the run instead.
 */
export function mountTmpfs(dir: string, size: string, why: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
    return true;
  } catch (err) {
    const detail = ((err as { stderr?: Buffer }).stderr?.toString() || (err as Error).message).trim();
    const message = `cannot mount a tmpfs on ${dir} (${detail}): ${why}`;
    if (process.env.CI === 'true') throw new Error(`${message} (CI runs as root; see .ci/run)`);
    console.warn(`skipped: ${message}`);
    return false;
  }
}

/** Remounts a tmpfs made by `mountTmpfs` read-only (`ro`) or writable again (`rw`). */
export function remountTmpfs(dir: string, mode: 'ro' | 'rw'): void {
  execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' });
}

/** Unmounts what `mountTmpfs` mounted (lazily, so a file still open does not keep it). */
export function unmountTmpfs(dir: string): void {
  execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
}

/** A TCP port on 127.0.0.1 that was free a moment ago, for a server process a test starts. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let execSandbox: 'bwrap' | 'off' | undefined;

/**
 * The command runner's sandbox setting for test servers: `bwrap` (the sandbox, required) where
 * bubblewrap is installed, `off` where it is not or when FB_TEST_EXEC_SANDBOX=off asks for the
 * runner without a sandbox (the `server-nosandbox` project of vitest.config.ts runs the runner's
 * tests again that way).
 */
export function testExecSandbox(): 'bwrap' | 'off' {
  execSandbox ??=
    process.env.FB_TEST_EXEC_SANDBOX === 'off'
      ? 'off'
      : haveTool('bwrap', 'the command runner’s sandbox; its tests run without one')
        ? 'bwrap'
        : 'off';
  return execSandbox;
}
