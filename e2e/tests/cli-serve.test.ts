import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtServer } from '../support/built.js';
import { freePort } from '../../packages/server/test/tools.js';

/** These tests run the built command, as users do: `node dist/main.js ...`. */
const main = builtServer();

let dir: string;
let env: NodeJS.ProcessEnv;
const running: ChildProcess[] = [];
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-cli-serve-'));
  fs.mkdirSync(path.join(dir, 'files'));
  fs.mkdirSync(path.join(dir, 'home'));
  // No FB_* variable or config file of the machine running the tests may leak in.
  env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FB_')));
  env.HOME = path.join(dir, 'home');
});
afterEach(async () => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]) {
  return spawnSync(process.execPath, [main, ...args], { cwd: dir, env, encoding: 'utf8' });
}

interface Server {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `filebrowser <args>` and waits for its "Listening on" line. */
function start(args: string[]): Promise<Server> {
  const child = spawn(process.execPath, [main, ...args], { cwd: dir, env });
  running.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "Listening" line; stdout: ${out} stderr: ${err}`)),
      20_000,
    );
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}; stdout: ${out} stderr: ${err}`));
    });
    child.stdout!.on('data', () => {
      const m = /Listening on (\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        child,
        url: m[1]!,
        stdout: () => out,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
  });
}

async function login(url: string, username: string, password: string) {
  const res = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return { status: res.status, body: await res.text() };
}

describe('filebrowser (serving)', () => {
  it('refuses unknown flags and bad values with one line on stderr and exit code 1', () => {
    const cases: [string[], RegExp][] = [
      [['--bogus'], /^error: unknown option '--bogus'/],
      [['-p', '0'], /^error: invalid value "0" for --port/],
      [['--tokenExpirationTime', '2 hours'], /^error: invalid value "2 hours" for --tokenExpirationTime/],
      [['--imageProcessors', '0'], /^error: invalid value "0" for --imageProcessors/],
      [['--socket', 'fb.sock', '-a', '0.0.0.0'], /^error: --socket cannot be combined with --address/],
      [['-k', 'key.pem'], /^error: --key needs --cert/],
      [['-r', 'missing'], /^error: root folder .*missing does not exist/],
      [['serve'], /^error: unknown command "serve"/],
      [['--logFormat', 'xml'], /^error: invalid value "xml" for --logFormat: expected one of "text", "json"/],
      [['--logLevel', 'loud'], /^error: invalid value "loud" for --logLevel/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    // None of these created a database.
    expect(fs.existsSync(path.join(dir, 'filebrowser.db'))).toBe(false);
  });

  it("prints the version with the commit it was built from, in File Browser's format", () => {
    const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: path.dirname(main),
      encoding: 'utf8',
    });
    const commit = git.status === 0 ? git.stdout.trim() : '(untracked)';
    const r = run(['version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^File Browser v\d+\.\d+\.\d+\S*\n$/);
    expect(r.stdout.trim().endsWith(`/${commit}`)).toBe(true);
  });

  it('creates the administrator on first start, shows the password once and never logs it', async () => {
    const port = await freePort();
    const args = ['-d', 'db/fb.db', '-r', 'files', '-p', String(port), '-l', 'logs/fb.log'];
    const first = await start(args);
    expect(first.url).toBe(`http://127.0.0.1:${port}`);
    const password = /password: (\S+)/.exec(first.stdout())?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect((await login(first.url, 'admin', password!)).status).toBe(200);
    expect((await login(first.url, 'admin', 'wrong-password')).status).toBe(403);
    expect(await first.stop()).toBe(0);
    const log = fs.readFileSync(path.join(dir, 'logs/fb.log'), 'utf8');
    expect(log).toContain('/api/login');
    expect(log).not.toContain(password!);

    // The second start keeps the account and the saved port, and prints no password.
    const second = await start(['-d', 'db/fb.db', '-l', '']);
    expect(second.url).toBe(`http://127.0.0.1:${port}`);
    expect(second.stdout()).not.toContain('password');
    expect((await login(second.url, 'admin', password!)).status).toBe(200);
    expect(await second.stop()).toBe(0);
  });

  it('logs one text line per request to --log FILE and reopens the file on SIGHUP', async () => {
    const port = await freePort();
    fs.writeFileSync(path.join(dir, 'files', 'data.bin'), Buffer.alloc(200_000, 1));
    const server = await start(['-d', 'fb.db', '-r', 'files', '-p', String(port), '-l', 'logs/fb.log']);
    const password = /password: (\S+)/.exec(server.stdout())![1]!;
    const token = (await login(server.url, 'admin', password)).body;
    const download = await fetch(`${server.url}/api/raw/data.bin`, { headers: { 'x-auth': token } });
    expect((await download.arrayBuffer()).byteLength).toBe(200_000);
    expect((await login(server.url, 'bob', 'wrong-password')).status).toBe(403);

    const file = path.join(dir, 'logs', 'fb.log');
    const before = fs.readFileSync(file, 'utf8');
    expect(before).toMatch(/^\S+Z 127\.0\.0\.1 admin GET \/api\/raw\/data\.bin 200 200000 \d+ms$/m);
    expect(before).toMatch(
      /^\S+Z WARN 127\.0\.0\.1 POST \/api\/login login failed for user "bob" from 127\.0\.0\.1$/m,
    );
    expect(before).not.toContain(token);
    expect(before).not.toContain(password);

    // What logrotate does: rename, then SIGHUP; the server writes on to a new file of the old name.
    fs.renameSync(file, file + '.1');
    server.child.kill('SIGHUP');
    for (let i = 0; i < 1000 && !fs.existsSync(file); i++) await fetch(`${server.url}/health`);
    const afterwards = await fetch(`${server.url}/api/resources/`, { headers: { 'x-auth': token } });
    expect(afterwards.status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/ admin GET \/api\/resources\/ 200 /);
    expect(fs.readFileSync(file + '.1', 'utf8')).not.toMatch(/ GET \/api\/resources\/ /);
  });

  it('takes back the administrator of a first start that cannot listen, and shows a password that works on the next', async () => {
    const port = await freePort();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    const failed = run(['-d', 'db/fb.db', '-r', 'files', '-a', '127.0.0.1', '-p', String(port), '-l', '']);
    await new Promise((resolve) => blocker.close(resolve));
    expect(failed.status).toBe(1);
    expect(failed.stderr).toBe(`error: cannot listen on 127.0.0.1:${port}: the address is already in use\n`);
    expect(failed.stdout).not.toContain('password');
    expect(fs.existsSync(path.join(dir, 'db/fb.db'))).toBe(false);

    // A key that is no key: readable, so only listening finds out.
    fs.writeFileSync(path.join(dir, 'cert.pem'), 'not a certificate');
    fs.writeFileSync(path.join(dir, 'key.pem'), 'not a key');
    const badTls = run([
      '-d',
      'db/fb.db',
      '-r',
      'files',
      '-p',
      String(port),
      '-l',
      '',
      '-t',
      'cert.pem',
      '-k',
      'key.pem',
    ]);
    expect(badTls.status).toBe(1);
    expect(badTls.stderr).toMatch(/^error: invalid TLS certificate or key: /);
    expect(badTls.stdout).not.toContain('password');
    expect(fs.existsSync(path.join(dir, 'db/fb.db'))).toBe(false);

    const server = await start([
      '-d',
      'db/fb.db',
      '-r',
      'files',
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-l',
      '',
    ]);
    expect(server.stdout()).toContain(
      `Database: ${path.join(dir, 'db/fb.db')}\nServing: ${path.join(dir, 'files')}\n`,
    );
    const password = /password: (\S+)/.exec(server.stdout())?.[1];
    expect((await login(server.url, 'admin', password!)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it('takes back the administrator it adds to a database without users when it cannot listen', async () => {
    const port = await freePort();
    expect(
      run([
        'config',
        'init',
        '-d',
        'fb.db',
        '-r',
        'files',
        '-a',
        '127.0.0.1',
        '-p',
        String(port),
        '--log',
        '',
      ]).status,
    ).toBe(0);
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    const failed = run(['-d', 'fb.db']);
    await new Promise((resolve) => blocker.close(resolve));
    expect(failed.status).toBe(1);
    expect(failed.stdout).not.toContain('password');
    expect(run(['users', 'ls', '-d', 'fb.db']).stdout.trim().split('\n')).toHaveLength(1);

    const server = await start(['-d', 'fb.db']);
    const password = /password: (\S+)/.exec(server.stdout())?.[1];
    expect((await login(server.url, 'admin', password!)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it('refuses a restore from another process while it serves', async () => {
    const server = await start(['-d', 'fb.db', '-r', 'files', '-p', String(await freePort()), '-l', '']);
    expect(run(['backup', 'copy.db', '-d', 'fb.db']).status).toBe(0);
    const refused = run(['restore', 'copy.db', '-d', 'fb.db']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `error: a File Browser server is running on ${path.join(dir, 'fb.db')}: stop it before restoring\n`,
    );
    const second = run(['-d', 'fb.db', '-p', String(await freePort())]);
    expect(second.status).toBe(1);
    expect(second.stderr).toMatch(/^error: the database .* is in use by another File Browser server/);
    // The lock goes with the process, however it ends.
    server.child.kill('SIGKILL');
    await new Promise((resolve) => server.child.once('exit', resolve));
    expect(run(['restore', 'copy.db', '-d', 'fb.db']).status).toBe(0);
  });

  it('uses --username and a --password hash for the first administrator', async () => {
    const hash = run(['hash', 'chosen-admin-password']).stdout.trim();
    const server = await start([
      '-r',
      'files',
      '-p',
      String(await freePort()),
      '-l',
      '',
      '--username',
      'root',
      '--password',
      hash,
    ]);
    expect(server.stdout()).toContain(
      'Created the administrator "root" with the password hash given by --password.',
    );
    expect((await login(server.url, 'root', 'chosen-admin-password')).status).toBe(200);
    await server.stop();
  });

  it('serves a database made with config init and users add', async () => {
    const port = await freePort();
    expect(
      run(['config', 'init', '-d', 'fb.db', '-r', 'files', '-p', String(port), '--log', '']).status,
    ).toBe(0);
    const add = run(['users', 'add', 'boss', 'boss-password-123', '--perm.admin', '-d', 'fb.db']);
    expect(add.stderr).toBe('');
    expect(add.status).toBe(0);
    const server = await start(['-d', 'fb.db']);
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    expect(server.stdout()).not.toContain('password');
    const res = await login(server.url, 'boss', 'boss-password-123');
    expect(res.status).toBe(200);
    expect(res.body.split('.')).toHaveLength(3);
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.text()).toMatch(/^\{"status":"OK","instance":"[\w-]+"\}$/);
    expect(await server.stop()).toBe(0);
  });

  it('takes flags over FB_* variables over the config file', async () => {
    const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
    fs.writeFileSync(
      path.join(dir, '.filebrowser.json'),
      JSON.stringify({ port: p1, root: 'files', log: '' }),
    );
    env.FB_PORT = String(p2);
    const fromEnv = await start([]);
    expect(fromEnv.url).toBe(`http://127.0.0.1:${p2}`);
    await fromEnv.stop();
    const fromFlag = await start(['--port', String(p3)]);
    expect(fromFlag.url).toBe(`http://127.0.0.1:${p3}`);
    await fromFlag.stop();
    delete env.FB_PORT;
    const fromFile = await start([]);
    expect(fromFile.url).toBe(`http://127.0.0.1:${p1}`);
    await fromFile.stop();
  });

  it('listens on a unix socket with the given mode', async () => {
    const socket = path.join(dir, 'fb.sock');
    const server = await start(['-r', 'files', '--socket', socket, '--socketPerm', '0600', '-l', '']);
    expect(server.url).toBe(`unix:${socket}`);
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
    const body = await new Promise<string>((resolve, reject) => {
      http
        .get({ socketPath: socket, path: '/health' }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    expect(body).toMatch(/^\{"status":"OK","instance":"[\w-]+"\}$/);
    expect(await server.stop()).toBe(0);
  });
});
