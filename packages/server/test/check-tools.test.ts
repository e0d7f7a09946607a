import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** scripts/check-tools.mjs, run by `npm test` first, on a PATH that holds only what a case gives it. */
const script = path.resolve(import.meta.dirname, '../../../scripts/check-tools.mjs');
const OPTIONAL = [
  'tar',
  'zip',
  'unzip',
  'bzip2',
  'xz',
  'zstd',
  'lz4',
  'litmus',
  'rclone',
  'python3',
  'bwrap',
  'prlimit',
  'mkfifo',
  'nginx',
  'caddy',
  'systemd-analyze',
  'pg_dump',
];

let dir: string;
let bin: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-check-tools-'));
  bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Puts these programs on the test's PATH (each a real program; only its presence is checked). */
function provide(names: string[]): void {
  for (const name of names) fs.symlinkSync('/bin/true', path.join(bin, name));
}

/** PostgreSQL's server programs, where Debian keeps them (a version's folder, off PATH). */
function providePostgres(): void {
  const serverBin = path.join(dir, 'postgresql', '15', 'bin');
  fs.mkdirSync(serverBin, { recursive: true });
  fs.symlinkSync('/bin/true', path.join(serverBin, 'initdb'));
}

function check(env: Record<string, string>, args: string[] = []) {
  const r = spawnSync(process.execPath, [script, ...args], {
    encoding: 'utf8',
    env: { PATH: bin, CHROMIUM_PATH: '/bin/true', FB_POSTGRES_LIB: path.join(dir, 'postgresql'), ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('check-tools', () => {
  it('says nothing and passes when every program is there', () => {
    provide(OPTIONAL);
    providePostgres();
    expect(check({})).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it('names what is missing in one line with the packages to install, and lets the run go on', () => {
    provide(OPTIONAL.filter((n) => !['litmus', 'xz'].includes(n)));
    providePostgres();
    const r = check({}, ['--no-install']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'check-tools: missing xz (archive downloads), litmus (WebDAV protocol suites); ' +
        'install with: apt-get install xz-utils litmus (the tests that need them are skipped)\n',
    );
  });

  it('stops the run under CI=true, where every test must run', () => {
    provide(OPTIONAL.filter((n) => n !== 'rclone'));
    providePostgres();
    const r = check({ CI: 'true' }, ['--no-install']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'check-tools: missing rclone (WebDAV client test); install with: apt-get install rclone\n',
    );
  });

  it('stops the run without Chromium, in one line and no stack trace, before the browser driver starts', () => {
    provide(OPTIONAL);
    providePostgres();
    const missing = path.join(dir, 'no-chromium');
    const r = check({ CHROMIUM_PATH: missing }, ['--no-install']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `check-tools: missing chromium (browser journeys); CHROMIUM_PATH=${missing} is not a program\n`,
    );
  });

  it('stops the run without PostgreSQL, whose server programs are off PATH', () => {
    provide(OPTIONAL);
    const r = check({}, ['--no-install']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'check-tools: missing initdb (the store on PostgreSQL); install with: apt-get install postgresql\n',
    );
  });

  it('with nothing at all, names every program and its Debian package on one line', () => {
    // No apt-get on this PATH either: even as root there is nothing to install with.
    const r = check({ CHROMIUM_PATH: path.join(dir, 'none') });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      'install with: apt-get install tar zip unzip bzip2 xz-utils zstd lz4 litmus rclone python3 bubblewrap util-linux coreutils nginx caddy systemd postgresql postgresql-client',
    );
    for (const name of ['chromium', 'initdb', ...OPTIONAL]) expect(lines[0]).toContain(`${name} (`);
  });
});
