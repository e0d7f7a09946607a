import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../packages/server/test/tools.js';
import { SERVER_ENV, serverLaunch } from '../../packages/server/src/process-settings.js';

// The release as an operator gets it: `npm run release` builds the tarball, npm installs it into
// an empty prefix, and the installed `filebrowser` serves and administers from a folder that has
// nothing of the checkout in it.
const repo = path.resolve(import.meta.dirname, '../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let base: string;
let prefix: string;
let work: string;
let env: NodeJS.ProcessEnv;
let npmEnv: NodeJS.ProcessEnv;
let filebrowser: string;

function check(what: string, r: SpawnSyncReturns<string>): string {
  if (r.status !== 0) throw new Error(`${what} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-release-'));
  prefix = path.join(base, 'prefix');
  work = path.join(base, 'work');
  fs.mkdirSync(path.join(work, 'files'), { recursive: true });
  fs.writeFileSync(path.join(work, 'files', 'hello.txt'), 'hello from the release test\n');
  fs.mkdirSync(path.join(base, 'home'));
  // Nothing of the npm run that started the tests (a workspace, a prefix) may reach the install,
  // and no FB_* variable or config file in $HOME may reach the program.
  npmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  env = Object.fromEntries(Object.entries(npmEnv).filter(([k]) => !k.startsWith('FB_')));
  env.HOME = path.join(base, 'home');

  const released = check(
    'npm run release',
    // the browser tier starts with `npm run build`: the release packs that build
    spawnSync(process.execPath, [path.join(repo, 'scripts/release.mjs'), '--skip-build'], {
      cwd: repo,
      env: npmEnv,
      encoding: 'utf8',
    }),
  );
  const tarball = path.resolve(repo, /release: (\S+\.tgz)/.exec(released)![1]!);
  // Packages come from the local cache when it has them (CI's `npm ci` filled it). Install scripts
  // are skipped: better-sqlite3's would compile it (no prebuilt binary can be downloaded here),
  // which takes minutes on two cores; the binary the checkout compiled for this same Node and
  // version is put in its place instead, and sharp needs no script (its binaries are packages).
  check(
    'npm install -g',
    spawnSync(
      npm,
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        tarball,
      ],
      { cwd: base, env: npmEnv, encoding: 'utf8' },
    ),
  );
  const installed = path.join(
    prefix,
    'lib',
    'node_modules',
    'filebrowser-next',
    'node_modules',
    'better-sqlite3',
  );
  const built = path.join(repo, 'node_modules', 'better-sqlite3');
  const version = (dir: string) =>
    (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  expect(version(installed)).toBe(version(built));
  fs.mkdirSync(path.join(installed, 'build', 'Release'), { recursive: true });
  fs.copyFileSync(
    path.join(built, 'build', 'Release', 'better_sqlite3.node'),
    path.join(installed, 'build', 'Release', 'better_sqlite3.node'),
  );
  // The package's own install step (run by npm with --allow-scripts=filebrowser-next): compiles
  // the server's native addon from the sources in the tarball, in a second.
  check(
    'the package install script',
    spawnSync(process.execPath, ['server/native/build.mjs'], {
      cwd: path.join(prefix, 'lib', 'node_modules', 'filebrowser-next'),
      env: npmEnv,
      encoding: 'utf8',
    }),
  );
  filebrowser = path.join(prefix, 'bin', 'filebrowser');
}, 900_000);

afterAll(() => {
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

function cli(args: string[]) {
  return spawnSync(filebrowser, args, { cwd: work, env, encoding: 'utf8' });
}

/** Starts the installed command and waits for the line that says it serves. */
function serve(args: string[]) {
  const child = spawn(filebrowser, args, { cwd: work, env });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<{ url: string; out: string }>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${out}\n${err}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, out });
    });
  });
  return {
    pid: child.pid!,
    listening,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('the release tarball installed with npm install -g', () => {
  it('is a filebrowser command that knows its version outside the checkout', () => {
    expect(fs.realpathSync(filebrowser).startsWith(fs.realpathSync(prefix))).toBe(true);
    const r = cli(['version']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^File Browser v\d+\.\d+\.\d+\S*\/\S+\n$/);
  });

  it('serves the web app and the API from another folder, then administers the same database', async () => {
    const server = serve(['-p', String(await freePort()), '-r', 'files', '--logLevel', 'debug']);
    try {
      const { url, out } = await server.listening;
      // The addon compiled at install is found beside the bundle and loaded (Linux only).
      if (process.platform === 'linux') expect(out).toContain('folders are read in C (native addon loaded)');
      if (process.platform === 'linux') {
        // The command is the server itself (it `exec`s node), started with the process settings
        // that the tarball carries in server/dist/process-settings.sh.
        const expected = serverLaunch(env);
        const words = (file: string) => fs.readFileSync(`/proc/${server.pid}/${file}`, 'utf8').split('\0');
        const cmdline = words('cmdline');
        const entry = cmdline.findIndex((word) => word.endsWith('main.js'));
        expect(cmdline.slice(1, entry)).toEqual(expected.nodeArgs);
        const environ = words('environ');
        for (const name of Object.keys(SERVER_ENV))
          expect(environ).toContain(`${name}=${expected.env[name]}`);
      }
      // The first start made the database in the current folder and printed the admin's password.
      expect(out).toContain(`Database: ${path.join(fs.realpathSync(work), 'filebrowser.db')}`);
      const password = /password: (\S+)/.exec(out)![1]!;

      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<title>File Browser<\/title>/);

      const login = await fetch(`${url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password }),
      });
      expect(login.status).toBe(200);
      const token = await login.text();

      const listing = await fetch(`${url}/api/resources/`, { headers: { 'X-Auth': token } });
      expect(listing.status).toBe(200);
      const body = (await listing.json()) as { items: { name: string; size: number }[] };
      expect(body.items.map((i) => [i.name, i.size])).toEqual([['hello.txt', 28]]);

      const refused = await fetch(`${url}/api/resources/`, { headers: { 'X-Auth': 'not-a-token' } });
      expect(refused.status).toBe(401);
    } finally {
      expect(await server.stop()).toBe(0);
    }

    const users = cli(['users', 'ls']);
    expect(users.status).toBe(0);
    expect(users.stdout).toMatch(/\badmin\b/);
    const config = cli(['config', 'cat']);
    expect(config.status).toBe(0);
    expect(config.stdout).toContain(fs.realpathSync(path.join(work, 'files')));
  });

  it('refuses a missing root folder with one line and no database left behind', () => {
    fs.rmSync(path.join(work, 'filebrowser.db'), { force: true });
    const r = cli(['-r', 'missing']);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toMatch(/^error: root folder .*missing does not exist$/);
    expect(fs.existsSync(path.join(work, 'filebrowser.db'))).toBe(false);
  });
});
