import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { createAccount } from '../src/auth/accounts.js';
import { hashPassword } from '../src/auth/passwords.js';
import { defaultConfig } from '../src/config/defaults.js';
import type { ServerConfig } from '../src/config/types.js';
import type { ServerContext } from '../src/services.js';
import { MAX_SOCKETS_PER_USER } from '../src/http/command/routes.js';
import { quickSetup } from '../src/setup.js';
import type { StoredSettings } from '../src/store/settings.js';
import { openStore, type Store } from '../src/store/index.js';
import type { StoredUser } from '../src/store/users.js';
import { testExecSandbox } from './tools.js';

const PASSWORD = 'user-password-for-tests';

/** Test-only programs, in a PATH folder of their own (sh is deny-listed, scripts are not). */
const HELPERS: Record<string, string> = {
  // Prints each argument on its own line, in brackets, so word boundaries show.
  printargs: 'for a in "$@"; do printf "[%s]\\n" "$a"; done',
  interleave: 'echo out1; sleep 0.2; echo err1 >&2; sleep 0.2; echo out2; sleep 0.2; echo err2 >&2',
  fail: 'echo bad >&2; exit 3',
  // Leaves a child in its process group, then waits. Its argument, the child's sleep time, marks
  // both processes: in the sandbox their PIDs are the sandbox's own, so tests find them by it.
  spawner: 'sleep "${1:-30}" & echo started; wait',
};

interface Server {
  app: FastifyInstance;
  ctx: ServerContext & { config: ServerConfig };
  store: Store;
  base: string;
  root: string;
  outside: string;
  bin: string;
  url: string;
  port: number;
}

/** A real app listening on a loopback port, with the command routes (registered here until app.ts does). */
async function startServer(): Promise<Server> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-command-'));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  const bin = path.join(base, 'bin');
  await Promise.all([root, outside, bin].map((d) => fs.mkdir(d)));
  for (const [name, body] of Object.entries(HELPERS)) {
    await fs.writeFile(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  }
  const dbFile = path.join(base, 'db', 'filebrowser.db');
  const config: ServerConfig = {
    ...defaultConfig(),
    root,
    database: dbFile,
    cacheDir: path.join(base, 'cache'),
    webDist: path.join(base, 'web'),
    disableExec: false,
    execPath: `${bin}:/usr/bin:/bin`,
    execSandbox: testExecSandbox(),
  };
  const store = openStore(dbFile);
  const { app, ctx } = await buildApp(config, store);
  await quickSetup(ctx, { username: 'admin', passwordHash: await hashPassword(PASSWORD), noauth: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  return {
    app,
    ctx: ctx as Server['ctx'],
    store,
    base,
    root,
    outside,
    bin,
    port,
    url: `ws://127.0.0.1:${port}`,
  };
}

interface Outcome {
  /** HTTP status when the upgrade was refused. */
  status?: number;
  lines: string[];
  code?: number;
  reason?: string;
}

interface RunOptions {
  headers?: Record<string, string>;
  origin?: string;
  /** Messages to send on open (default: the command line). */
  messages?: string[];
  /** Called with each received line; may act on the socket. */
  onLine?: (line: string, ws: WebSocket) => void;
  /** Close the socket as soon as the messages are sent, before any answer. */
  closeAfterSend?: boolean;
}

function run(url: string, line: string | undefined, opts: RunOptions = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: opts.headers, origin: opts.origin });
    const lines: string[] = [];
    ws.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode, lines });
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      for (const m of opts.messages ?? (line === undefined ? [] : [line])) ws.send(m);
      if (opts.closeAfterSend) ws.close();
    });
    ws.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      lines.push(text);
      opts.onLine?.(text, ws);
    });
    ws.on('close', (code, reason) => resolve({ lines, code, reason: reason.toString() }));
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

/** Running: it exists and is not a zombie waiting for its new parent to reap it. */
async function pidAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** A number for `spawner` to sleep, unique to one test: it marks that test's processes. */
function marker(): string {
  return `30.${String(crypto.randomInt(1_000_000)).padStart(6, '0')}`;
}

/** Running processes (the leader shell, its sleep, the sandbox around them) whose arguments hold `mark`. */
async function marked(mark: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await fs.readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(mark) && (await pidAlive(Number(name)))) found.push(Number(name));
  }
  return found;
}

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('command websocket', () => {
  let s: Server;
  let bob: StoredUser;
  let bobToken: string;
  let bobDir: string;

  const login = async (username: string) => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username, password: PASSWORD },
    });
    expect(res.statusCode).toBe(200);
    return res.body;
  };
  const as = (token: string) => ({ headers: { 'x-auth': token } });
  const setCommands = (commands: string[]) => {
    bob = s.store.users.update({ ...s.store.users.get(bob.id)!, commands });
  };
  const saveSettings = (patch: Partial<StoredSettings>) =>
    s.store.settings.save({ ...s.store.settings.get(), ...patch });

  beforeAll(async () => {
    s = await startServer();
    bob = await createAccount(
      s.ctx,
      {
        username: 'bob',
        scope: '/users/bob',
        perm: {
          admin: false,
          execute: true,
          create: true,
          rename: true,
          modify: true,
          delete: true,
          share: true,
          download: true,
        },
        commands: [],
      },
      PASSWORD,
      'cli',
    );
    bobToken = await login('bob');
    bobDir = await fs.realpath(path.join(s.root, 'users/bob'));
    await fs.writeFile(path.join(s.outside, 'secret.txt'), 'outside secret\n');
    await fs.mkdir(path.join(s.root, 'users/alice'), { recursive: true });
    await fs.writeFile(path.join(s.root, 'users/alice/secret.txt'), 'alice secret\n');
  });

  afterAll(async () => {
    await s.app.close();
    s.store.close();
    await fs.rm(s.base, { recursive: true, force: true });
  });

  beforeEach(async () => {
    setCommands([
      'echo',
      'printargs',
      'ls',
      'cat',
      'pwd',
      'find',
      'sleep',
      'interleave',
      'fail',
      'spawner',
      'yes',
    ]);
    s.ctx.config.disableExec = false;
    s.ctx.config.execTimeLimit = defaultConfig().execTimeLimit;
    s.ctx.config.execOutputLimit = defaultConfig().execOutputLimit;
    s.ctx.config.execPath = `${s.bin}:/usr/bin:/bin`;
    saveSettings({ unsafeCommands: [], rules: [] });
    // A fresh scope folder for each test, so "creates nothing" can be checked by listing it.
    await fs.rm(bobDir, { recursive: true, force: true });
    await fs.mkdir(bobDir, { recursive: true });
    await fs.writeFile(path.join(bobDir, 'hello.txt'), 'hello\n');
  });

  describe('before the upgrade', () => {
    it('refuses an unauthenticated upgrade with 401', async () => {
      expect((await run(`${s.url}/api/command/`, 'echo hi')).status).toBe(401);
      expect((await run(`${s.url}/api/command/`, 'echo hi', { headers: { 'x-auth': 'a.b.c' } })).status).toBe(
        401,
      );
    });

    it('refuses a cross-origin upgrade with 403, and accepts the same origin', async () => {
      const cross = await run(`${s.url}/api/command/`, 'echo hi', {
        ...as(bobToken),
        origin: 'http://evil.example',
      });
      expect(cross.status).toBe(403);
      const same = await run(`${s.url}/api/command/`, 'echo hi', {
        ...as(bobToken),
        origin: `http://127.0.0.1:${s.port}`,
      });
      expect(same).toMatchObject({ lines: ['hi'], code: 1000 });
    });

    it('accepts the auth cookie, as browsers send it', async () => {
      const r = await run(`${s.url}/api/command`, 'echo cookie', { headers: { cookie: `auth=${bobToken}` } });
      expect(r).toMatchObject({ lines: ['cookie'], code: 1000 });
    });

    it('answers a plain GET (no upgrade) with 404', async () => {
      const res = await s.app.inject({ method: 'GET', url: '/api/command/', ...as(bobToken) });
      expect(res.statusCode).toBe(404);
    });
  });

  describe('permission, checked before any message is read', () => {
    it('refuses everyone when exec is disabled', async () => {
      s.ctx.config.disableExec = true;
      const r = await run(`${s.url}/api/command/`, undefined, as(bobToken));
      expect(r.lines).toEqual(['Command not allowed.']);
      expect(r.code).toBe(1008);
    });

    it('runs no command line that comes after its session ended', async () => {
      const token = await login('bob');
      const sid = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sid: string })
        .sid;
      const ws = new WebSocket(`${s.url}/api/command/`, { headers: { 'x-auth': token } });
      const lines: string[] = [];
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      ws.on('message', (data) => lines.push((data as Buffer).toString('utf8')));
      // The socket is open (authenticated); the session ends before the command line is sent.
      ws.on('open', () => {
        s.ctx.auth.logout(sid);
        ws.send('echo still here');
      });
      expect(await closed).toBe(1008);
      expect(lines).toEqual(['Command not allowed: the session it was started in has ended.']);
    });

    it('refuses a user without the execute permission', async () => {
      bob = s.store.users.update({ ...s.store.users.get(bob.id)!, perm: { ...bob.perm, execute: false } });
      try {
        const r = await run(`${s.url}/api/command/`, undefined, as(bobToken));
        expect(r.lines).toEqual(['Command not allowed.']);
      } finally {
        bob = s.store.users.update({ ...s.store.users.get(bob.id)!, perm: { ...bob.perm, execute: true } });
      }
    });

    it('refuses a user with an empty allow-list', async () => {
      setCommands([]);
      const r = await run(`${s.url}/api/command/`, undefined, as(bobToken));
      expect(r.lines).toEqual(['Command not allowed.']);
    });
  });

  describe('the allow-list', () => {
    it('refuses a command that is not on it', async () => {
      const r = await run(`${s.url}/api/command/`, 'rm hello.txt', as(bobToken));
      expect(r).toMatchObject({ lines: ['Command not allowed.'], code: 1008 });
      await expect(fs.stat(path.join(bobDir, 'hello.txt'))).resolves.toBeTruthy();
    });

    it('matches the first word exactly: no prefix, no path, no case folding', async () => {
      setCommands(['ec', '/bin/echo', 'ECHO']);
      for (const line of ['echo x', '/bin/echo x', 'ECH x', './echo x']) {
        expect((await run(`${s.url}/api/command/`, line, as(bobToken))).lines).toEqual([
          'Command not allowed.',
        ]);
      }
    });

    it('refuses commands that run other commands even when allow-listed', async () => {
      setCommands(['xargs', 'env', 'sh', 'bash', 'timeout', 'nice', 'python3', 'awk', 'sed']);
      for (const line of [
        'xargs touch',
        'env',
        'sh -c id',
        'bash',
        'timeout 1 id',
        'nice id',
        'python3',
        'awk 1',
        'sed 1p',
      ]) {
        const r = await run(`${s.url}/api/command/`, line, as(bobToken));
        expect(r.lines[0], line).toMatch(/^Command not allowed: .* unsafeCommands setting\.$/);
        expect(r.code).toBe(1008);
      }
    });

    it('runs a deny-listed command an administrator named in unsafeCommands', async () => {
      setCommands(['env']);
      saveSettings({ unsafeCommands: ['env'] });
      const r = await run(`${s.url}/api/command/`, 'env', as(bobToken));
      expect(r.code).toBe(1000);
      // The environment is minimal: nothing of the server's leaks into commands (the sandbox sets
      // PWD, the working folder).
      expect(r.lines.filter((l) => l !== `PWD=${bobDir}`).sort()).toEqual([
        `HOME=${bobDir}`,
        'LANG=C.UTF-8',
        `PATH=${s.bin}:/usr/bin:/bin`,
      ]);
    });

    it('lets find -exec run once an administrator allows find through the settings API', async () => {
      const admin = await login('admin');
      const put = (unsafeCommands: string[]) =>
        s.app.inject({ method: 'PUT', url: '/api/settings', payload: { unsafeCommands }, ...as(admin) });
      expect((await put(['find'])).statusCode).toBe(200);
      const r = await run(`${s.url}/api/command/`, 'find . -name hello.txt -exec cat {} ;', as(bobToken));
      expect(r).toMatchObject({ lines: ['hello'], code: 1000 });
      // Allowing find exempts find only.
      setCommands(['find', 'env']);
      expect((await run(`${s.url}/api/command/`, 'env', as(bobToken))).lines[0]).toMatch(
        /^Command not allowed: env runs the command given in its arguments\./,
      );
      expect((await put([])).statusCode).toBe(200);
      const again = await run(`${s.url}/api/command/`, 'find . -exec cat {} ;', as(bobToken));
      expect(again).toMatchObject({
        lines: [expect.stringMatching(/^Command not allowed: find -exec/)],
        code: 1008,
      });
    });

    it('refuses find -exec, -execdir, -ok, -okdir and -delete, and runs a plain find', async () => {
      for (const primary of [
        '-exec touch pwned {} ;',
        '-execdir touch pwned ;',
        '-ok id ;',
        '-okdir id ;',
        '-delete',
      ]) {
        const r = await run(`${s.url}/api/command/`, `find . ${primary}`, as(bobToken));
        expect(r.lines[0]).toMatch(/^Command not allowed: find -/);
      }
      await expect(fs.readdir(bobDir)).resolves.toEqual(['hello.txt']);
      const ok = await run(`${s.url}/api/command/`, 'find . -name hello.txt', as(bobToken));
      expect(ok).toMatchObject({ lines: ['./hello.txt'], code: 1000 });
    });

    it('says when an allow-listed command is not on the PATH', async () => {
      setCommands(['no-such-tool']);
      const r = await run(`${s.url}/api/command/`, 'no-such-tool', as(bobToken));
      expect(r.lines).toEqual(['Command not found: no-such-tool']);
    });

    it('never runs a program that lies inside the served files', async () => {
      await fs.writeFile(path.join(bobDir, 'mine'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
      s.ctx.config.execPath = `${bobDir}:/usr/bin:/bin`;
      setCommands(['mine']);
      const r = await run(`${s.url}/api/command/`, 'mine', as(bobToken));
      expect(r.lines).toEqual(['Command not allowed: the program lies inside the served files.']);
    });
  });

  describe('no shell: every metacharacter is literal', () => {
    const forms: Array<[string, string[]]> = [
      ['printargs a;touch x', ['[a;touch]', '[x]']],
      ['printargs a && touch x', ['[a]', '[&&]', '[touch]', '[x]']],
      ['printargs a || touch x', ['[a]', '[||]', '[touch]', '[x]']],
      ['printargs a | touch x', ['[a]', '[|]', '[touch]', '[x]']],
      ['printargs a & touch x', ['[a]', '[&]', '[touch]', '[x]']],
      ['printargs $(touch x)', ['[$(touch]', '[x)]']],
      ['printargs "$(touch x)"', ['[$(touch x)]']],
      ['printargs `touch x`', ['[`touch]', '[x`]']],
      ['printargs a > x', ['[a]', '[>]', '[x]']],
      ['printargs a >> x', ['[a]', '[>>]', '[x]']],
      ['printargs a < hello.txt', ['[a]', '[<]', '[hello.txt]']],
      ['printargs $HOME ${HOME} $PATH', ['[$HOME]', '[${HOME}]', '[$PATH]']],
      ['printargs * ?.txt [h]*', ['[*]', '[?.txt]', '[[h]*]']],
      ['printargs {a,b} x{1..3}', ['[{a,b}]', '[x{1..3}]']],
      ['printargs (touch x)', ['[(touch]', '[x)]']],
      ['printargs \'a b\' "c d" e\\ f', ['[a b]', '[c d]', '[e f]']],
      ['printargs a#b # c', ['[a#b]', '[#]', '[c]']],
      ['printargs x=1 !x', ['[x=1]', '[!x]']],
    ];
    it.each(forms)('%s', async (line, expected) => {
      const r = await run(`${s.url}/api/command/`, line, as(bobToken));
      expect(r).toMatchObject({ lines: expected, code: 1000 });
      await expect(fs.readdir(bobDir)).resolves.toEqual(['hello.txt']);
    });

    it('echo a;touch x prints "a;touch x" and creates nothing', async () => {
      const r = await run(`${s.url}/api/command/`, 'echo a;touch x', as(bobToken));
      expect(r).toMatchObject({ lines: ['a;touch x'], code: 1000 });
      await expect(fs.readdir(bobDir)).resolves.toEqual(['hello.txt']);
    });

    it('sends the parse error of an unbalanced quote', async () => {
      const r = await run(`${s.url}/api/command/`, "echo 'unterminated", as(bobToken));
      expect(r).toMatchObject({ lines: ['unterminated single quote'], code: 1008 });
    });
  });

  describe('paths are confined to the scope', () => {
    const refused = async (line: string) => {
      const r = await run(`${s.url}/api/command/`, line, as(bobToken));
      expect(r.lines[0], line).toMatch(
        /^Command not allowed: the path .* (is outside your scope|names another user’s home folder)\.$/,
      );
      expect(r.code).toBe(1008);
      expect(r.lines).toHaveLength(1);
    };

    it('refuses absolute paths outside the scope', async () => {
      await refused('cat /etc/passwd');
      await refused(`cat ${s.outside}/secret.txt`);
      await refused(`cat ${s.root}/users/alice/secret.txt`);
      await refused('ls /');
    });

    it('refuses ../ arguments that leave the scope', async () => {
      await refused('cat ../alice/secret.txt');
      await refused('cat ../../../outside/secret.txt');
      await refused('cat sub/../../alice/secret.txt');
      await refused('ls ..');
    });

    it('refuses paths inside options and assignments', async () => {
      setCommands(['cat', 'ls', 'dd', 'printargs']);
      await refused('dd if=/etc/passwd');
      await refused('ls --hide=x --ignore=/etc');
      await refused('printargs -f/etc/passwd');
      await refused('printargs -xvf../alice/secret.txt');
      await refused('printargs @/etc/passwd');
      await refused('printargs file:///etc/passwd');
      await refused('cat ~root/x');
    });

    it('refuses a symlink in the scope that leads out of it', async () => {
      await fs.symlink(s.outside, path.join(bobDir, 'link'));
      await refused('cat link/secret.txt');
      await refused('cat link');
    });

    it('allows paths that stay inside, absolute ones included', async () => {
      await fs.mkdir(path.join(bobDir, 'sub'));
      for (const line of ['cat hello.txt', 'cat ./sub/../hello.txt', `cat ${bobDir}/hello.txt`]) {
        const r = await run(`${s.url}/api/command/`, line, as(bobToken));
        expect(r, line).toMatchObject({ lines: ['hello'], code: 1000 });
      }
      // `~` is checked as the home folder (the scope) but, with no shell, passed on unexpanded.
      const tilde = await run(`${s.url}/api/command/`, 'printargs ~/hello.txt ~', as(bobToken));
      expect(tilde).toMatchObject({ lines: ['[~/hello.txt]', '[~]'], code: 1000 });
    });

    it('runs in the requested folder, resolved through the scope', async () => {
      await fs.mkdir(path.join(bobDir, 'sub'));
      const r = await run(`${s.url}/api/command/sub`, 'pwd', as(bobToken));
      expect(r).toMatchObject({ lines: [path.join(bobDir, 'sub')], code: 1000 });
      const home = await run(`${s.url}/api/command/`, 'pwd', as(bobToken));
      expect(home.lines).toEqual([bobDir]);
    });

    it('refuses a working folder that is missing, outside or hidden by rules', async () => {
      expect((await run(`${s.url}/api/command/nope`, 'pwd', as(bobToken))).lines).toEqual([
        'The working folder does not exist.',
      ]);
      await fs.symlink(s.outside, path.join(bobDir, 'out'));
      expect((await run(`${s.url}/api/command/out`, 'pwd', as(bobToken))).lines).toEqual([
        'Command not allowed.',
      ]);
      await fs.mkdir(path.join(bobDir, 'private'));
      saveSettings({ rules: [{ regex: false, allow: false, path: '/private', regexp: null }] });
      expect((await run(`${s.url}/api/command/private`, 'pwd', as(bobToken))).lines).toEqual([
        'Command not allowed.',
      ]);
      const r = await run(`${s.url}/api/command/`, 'ls private', as(bobToken));
      expect(r.lines[0]).toBe('Command not allowed: the path "private" is hidden by your rules.');
    });
  });

  describe('messages', () => {
    it('skips whitespace-only messages and runs the first real one', async () => {
      const r = await run(`${s.url}/api/command/`, undefined, {
        ...as(bobToken),
        messages: ['   ', '\n\t', 'echo hi'],
      });
      expect(r).toMatchObject({ lines: ['hi'], code: 1000 });
    });

    it('closes with 1009 on an oversized message and runs nothing', async () => {
      setCommands(['touch']);
      const big = 'touch made-by-big-message ' + 'a'.repeat(100 * 1024);
      const r = await run(`${s.url}/api/command/`, big, as(bobToken));
      expect(r.code).toBe(1009);
      expect(r.lines).toEqual([]);
      await expect(fs.readdir(bobDir)).resolves.toEqual(['hello.txt']);
    });
  });

  describe('the process', () => {
    it('streams stdout and stderr interleaved, in the order they were written', async () => {
      const r = await run(`${s.url}/api/command/`, 'interleave', as(bobToken));
      expect(r).toMatchObject({
        lines: ['out1', 'err1', 'out2', 'err2'],
        code: 1000,
        reason: 'exit status 0',
      });
    });

    it('reports a non-zero exit status with close code 1011', async () => {
      const r = await run(`${s.url}/api/command/`, 'fail', as(bobToken));
      expect(r).toMatchObject({ lines: ['bad'], code: 1011, reason: 'exit status 3' });
    });

    it('kills the command at the time limit', async () => {
      s.ctx.config.execTimeLimit = 1;
      const started = Date.now();
      const r = await run(`${s.url}/api/command/`, 'sleep 5', as(bobToken));
      expect(Date.now() - started).toBeLessThan(4000);
      expect(r).toMatchObject({
        lines: ['Command stopped: time limit of 1 s reached.'],
        code: 1011,
        reason: 'time limit of 1 s reached',
      });
    });

    it('kills the command when its output passes the cap', async () => {
      s.ctx.config.execOutputLimit = 4096;
      const r = await run(`${s.url}/api/command/`, 'yes', as(bobToken));
      expect(r.code).toBe(1011);
      expect(r.lines.at(-1)).toBe('Command stopped: output limit of 4 KiB reached.');
      const body = r.lines.slice(0, -1);
      expect(body.length).toBeGreaterThan(1000);
      expect(body.join('\n').length).toBeLessThanOrEqual(4096);
    });

    it('kills the whole process group when the socket closes', async () => {
      const mark = marker();
      let seen = 0;
      const r = await run(`${s.url}/api/command/`, `spawner ${mark}`, {
        ...as(bobToken),
        onLine: (line, ws) => {
          if (line !== 'started') return;
          marked(mark).then(
            (pids) => {
              seen = pids.length;
              ws.terminate();
            },
            () => ws.terminate(),
          );
        },
      });
      expect(r.lines).toEqual(['started']);
      // The leader and its sleep (and the sandbox's processes, when there is one) were running.
      expect(seen).toBeGreaterThanOrEqual(2);
      expect(await until(async () => (await marked(mark)).length === 0)).toBe(true);
    });

    it('stops a command whose socket closed while it was starting, and frees its slot', async () => {
      // Closed right after the command line: the close lands somewhere in the command's start-up.
      const mark = marker();
      for (let i = 0; i < MAX_SOCKETS_PER_USER * 2; i++) {
        await run(`${s.url}/api/command/`, `spawner ${mark}`, { ...as(bobToken), closeAfterSend: true });
      }
      expect(
        await until(
          async () => (await run(`${s.url}/api/command/`, 'echo hi', as(bobToken))).lines[0] === 'hi',
        ),
      ).toBe(true);
      expect(await until(async () => (await marked(mark)).length === 0)).toBe(true);
    });

    it('kills the process group when the socket closes while the server is busy', async () => {
      // Keep libuv's thread pool queued up (the server runs in this process), so the command's
      // start-up awaits file-system work while its output and the close already arrive. Short
      // jobs, queued again as each ends, keep it as busy as long ones while making each of the
      // start-up's calls wait less: on a loaded machine long ones made the start-up take minutes.
      let busy = true;
      const keepBusy = async () => {
        while (busy) await new Promise((r) => crypto.pbkdf2(PASSWORD, 'salt', 30_000, 32, 'sha256', r));
      };
      const workers = Array.from({ length: 8 }, keepBusy);
      const mark = marker();
      try {
        const r = await run(`${s.url}/api/command/`, `spawner ${mark}`, {
          ...as(bobToken),
          onLine: (line, ws) => {
            if (line === 'started') ws.terminate();
          },
        });
        expect(r.lines).toEqual(['started']);
      } finally {
        busy = false;
        await Promise.all(workers);
      }
      expect(await until(async () => (await marked(mark)).length === 0)).toBe(true);
    });

    it('lets one user hold only a few command sockets at once', async () => {
      const sockets: WebSocket[] = [];
      const runs: Array<Promise<Outcome>> = [];
      for (let i = 0; i < MAX_SOCKETS_PER_USER; i++) {
        runs.push(
          run(`${s.url}/api/command/`, 'spawner', {
            ...as(bobToken),
            onLine: (line, ws) => {
              if (line === 'started') sockets.push(ws);
            },
          }),
        );
      }
      expect(await until(() => sockets.length === MAX_SOCKETS_PER_USER)).toBe(true);
      const extra = await run(`${s.url}/api/command/`, 'echo hi', as(bobToken));
      expect(extra.lines).toEqual([`Command not allowed: you already run ${MAX_SOCKETS_PER_USER} commands.`]);
      for (const ws of sockets) ws.close();
      await Promise.all(runs);
      expect(
        await until(
          async () => (await run(`${s.url}/api/command/`, 'echo hi', as(bobToken))).lines[0] === 'hi',
        ),
      ).toBe(true);
    });

    it('treats file names made of shell syntax as plain names', async () => {
      const marker = `pwned-${crypto.randomUUID()}`;
      const name = `$(touch ${marker});touch ${marker}`;
      await fs.writeFile(path.join(bobDir, name), 'x');
      const r = await run(`${s.url}/api/command/`, `ls -1`, as(bobToken));
      expect(r.lines.sort()).toEqual([name, 'hello.txt'].sort());
      const p = await run(`${s.url}/api/command/`, `printargs '${name}'`, as(bobToken));
      expect(p.lines).toEqual([`[${name}]`]);
      expect((await fs.readdir(bobDir)).sort()).toEqual([name, 'hello.txt'].sort());
    });
  });
});
