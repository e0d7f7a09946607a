import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtServer } from '../support/built.js';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../packages/server/src/process-settings.js';
import { freePort } from '../../packages/server/test/tools.js';

/**
 * The two ways users start the server from a checkout or an install, `npm start`
 * (scripts/start.mjs) and the `filebrowser` command (packages/server/bin/filebrowser, which the
 * systemd unit and the container image run), start it with its process settings
 * (src/process-settings.ts), let the user's own win, pass signals on and end with its exit code.
 * What the server runs with is read from /proc of the server's own process.
 */

const repo = path.resolve(import.meta.dirname, '../..');
const bin = path.join(repo, 'packages/server/bin/filebrowser');
const startScript = path.join(repo, 'scripts/start.mjs');
builtServer();

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder to serve and keep the database in, and an environment without settings. */
function place(extra: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-launch-'));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, 'files'));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('FB_') && !/^npm_/i.test(k)) env[k] = v;
  }
  delete env.NODE_OPTIONS;
  for (const name of Object.keys(SERVER_ENV)) delete env[name];
  env.HOME = dir;
  // the node of this test first on PATH: the command runs `node` from PATH
  env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}`;
  Object.assign(env, extra);
  return { dir, env };
}

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `command args` and waits for the server's "Listening on" line. */
async function start(command: string, args: string[], env: Record<string, string>, cwd: string) {
  // A process group of its own, as a shell gives a job: Ctrl-C is sent to the whole group.
  const child = spawn(command, args, { cwd, env, detached: true });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /Listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    void exited.then((e) => reject(new Error(`exited (${e.code ?? e.signal}) before listening:\n${out}`)));
  });
  return { child, url, output: () => out, exited } satisfies Started;
}

/** Parent process id of a process, from /proc/<pid>/stat. */
function parentOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** The one process whose parent is `pid`. */
function onlyChildOf(pid: number): number {
  const found = fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((p) => parentOf(p) === pid);
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** What a process runs with: its command line and environment, from /proc. */
function processOf(pid: number) {
  const words = (file: string) => fs.readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0').filter(Boolean);
  const cmdline = words('cmdline');
  const env = Object.fromEntries(
    words('environ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  return { cmdline, env };
}

/** The server's own flags: those between node and the entry file. */
function nodeFlags(cmdline: string[]): string[] {
  const entry = cmdline.findIndex((word) => word.endsWith('main.js'));
  expect(entry).toBeGreaterThan(0);
  return cmdline.slice(1, entry);
}

function serveArgs(dir: string, port: number): string[] {
  return [
    '-d',
    path.join(dir, 'fb.db'),
    '-r',
    path.join(dir, 'files'),
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
    '-l',
    '',
  ];
}

/** The parent ends only once it has reaped the server: the server is gone by then. */
function expectGone(pid: number): void {
  expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
}

describe.runIf(process.platform === 'linux')('the filebrowser command (bin/filebrowser)', () => {
  async function serveWithBin(extra: Record<string, string> = {}) {
    const { dir, env } = place(extra);
    // installed as npm installs a command: a symbolic link in a bin folder
    const link = path.join(dir, 'bin', 'filebrowser');
    fs.mkdirSync(path.dirname(link));
    fs.symlinkSync(path.relative(path.dirname(link), bin), link);
    return start(link, serveArgs(dir, await freePort()), env, dir);
  }

  it('is the server itself, started with the settings, and stops cleanly on SIGTERM', async () => {
    const server = await serveWithBin();
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    // exec: the command's process is node running the server, no shell left between
    const { cmdline, env } = processOf(server.child.pid!);
    expect(path.basename(cmdline[0]!)).toBe('node');
    expect(nodeFlags(cmdline)).toEqual([...SERVER_NODE_FLAGS]);
    for (const [name, value] of Object.entries(SERVER_ENV)) expect(env[name]).toBe(value);

    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('Received SIGTERM, shutting down.');
  });

  it("leaves the user's own values as they are", async () => {
    const server = await serveWithBin({ MALLOC_ARENA_MAX: '4', NODE_OPTIONS: '--max_semi_space_size=8' });
    const { cmdline, env } = processOf(server.child.pid!);
    expect(nodeFlags(cmdline)).toEqual([]);
    expect(env.MALLOC_ARENA_MAX).toBe('4');
    expect(env.NODE_OPTIONS).toBe('--max_semi_space_size=8');
    process.kill(-server.child.pid!, 'SIGINT');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it("ends with the server's exit code and message", async () => {
    const { dir, env } = place();
    const child = spawn(bin, serveArgs(dir, 0), { cwd: dir, env });
    children.push(child);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(err).toContain('invalid value "0" for --port');
  });
});

describe.runIf(process.platform === 'linux')('npm start (scripts/start.mjs)', () => {
  async function serveWithStart(extra: Record<string, string> = {}) {
    const { dir, env } = place(extra);
    const started = await start(
      process.execPath,
      [startScript, ...serveArgs(dir, await freePort())],
      env,
      dir,
    );
    const pid = onlyChildOf(started.child.pid!);
    return { ...started, pid };
  }

  it('starts the server as a child with the settings; Ctrl-C stops it cleanly, once', async () => {
    const server = await serveWithStart();
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const { cmdline, env } = processOf(server.pid);
    expect(nodeFlags(cmdline)).toEqual([...SERVER_NODE_FLAGS]);
    for (const [name, value] of Object.entries(SERVER_ENV)) expect(env[name]).toBe(value);

    // Ctrl-C: the terminal sends SIGINT to the whole foreground process group
    process.kill(-server.child.pid!, 'SIGINT');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('Received SIGINT, shutting down.');
    expect(server.output()).not.toContain('again');
    expectGone(server.pid);
  });

  it('passes on one Ctrl-C that reaches it twice at once (the terminal and npm) as one', async () => {
    const server = await serveWithStart();
    // bash as npm's script shell hands its process over to node: npm passes the SIGINT it got
    // from the terminal on to this process too (here the kernel may merge the two while the
    // first is pending; when it does not, the second is not passed on)
    process.kill(-server.child.pid!, 'SIGINT');
    process.kill(server.child.pid!, 'SIGINT');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('Received SIGINT, shutting down.');
    expect(server.output()).not.toContain('again');
    expectGone(server.pid);
  });

  it('stops the server cleanly when it is killed itself (no server left running alone)', async () => {
    const server = await serveWithStart();
    server.child.kill('SIGKILL');
    expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // not our child: its end is seen in /proc (the deadline only bounds a failure)
    const deadline = Date.now() + 20_000;
    while (fs.existsSync(`/proc/${server.pid}`) && parentOf(server.pid) !== null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(parentOf(server.pid), 'the server is still running').toBeNull();
  });

  it('passes SIGTERM on to the server', async () => {
    const server = await serveWithStart();
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('Received SIGTERM, shutting down.');
    expectGone(server.pid);
  });

  it("leaves the user's own values as they are", async () => {
    const server = await serveWithStart({ MALLOC_ARENA_MAX: '4', NODE_OPTIONS: '--max-semi-space-size=8' });
    const { cmdline, env } = processOf(server.pid);
    expect(nodeFlags(cmdline)).toEqual([]);
    expect(env.MALLOC_ARENA_MAX).toBe('4');
    expect(env.NODE_OPTIONS).toBe('--max-semi-space-size=8');
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it("ends with the server's exit code, and by the signal that ended it", async () => {
    const { dir, env } = place();
    const failing = spawn(process.execPath, [startScript, ...serveArgs(dir, 0)], { cwd: dir, env });
    children.push(failing);
    let err = '';
    failing.stderr.on('data', (d: Buffer) => (err += d.toString()));
    expect(await new Promise((resolve) => failing.on('exit', (c) => resolve(c)))).toBe(1);
    expect(err).toContain('invalid value "0" for --port');

    const server = await serveWithStart();
    process.kill(server.pid, 'SIGKILL');
    expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });
});
