import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../packages/server/src/store/index.js';
import { freePort, mountTmpfs, unmountTmpfs } from '../../packages/server/test/tools.js';
import { builtServer } from '../support/built.js';
import { startListening } from '../support/listening.js';
import { slowRequest as startSlowRequest, type SlowRequest } from '../support/slow-request.js';

/**
 * A real server process killed (SIGKILL) in the middle of a PUT, a POST upload,
 * a tus upload, a copy and a move across file systems, then started again over the same folders
 * and database: every file has its old or its new content, never part of it; nothing is left
 * behind (no staging name anywhere under the root or the data folder, no record of a write or a
 * move in progress); and doing it again succeeds. The test is in the middle of an operation by
 * controlling it, never by timing: request bodies are sent in parts by the test, and the kill
 * comes once the file system shows the staging file (polled as the event it is).
 */
const main = builtServer();

const MiB = 1024 * 1024;
let dir: string;
let files: string;
let data: string;
let env: NodeJS.ProcessEnv;
let password: string | undefined;
let mounted: string | undefined;
const running: ChildProcess[] = [];
const sockets: net.Socket[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-crash-'));
  files = path.join(dir, 'files');
  data = path.join(dir, 'db');
  fs.mkdirSync(files);
  fs.mkdirSync(path.join(dir, 'home'));
  env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FB_')));
  env.HOME = path.join(dir, 'home');
  password = undefined;
});
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  if (mounted) unmountTmpfs(mounted);
  mounted = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Server {
  child: ChildProcess;
  port: number;
  token: string;
  exited: Promise<number | null>;
}

/** Starts the server over the test's folders, waits until it listens and signs the administrator in. */
async function start(): Promise<Server> {
  const port = await freePort();
  const { child, stdout, exited } = await startListening(
    [main, '-d', 'db/fb.db', '-r', 'files', '-a', '127.0.0.1', '-p', String(port), '-l', ''],
    { cwd: dir, env },
  );
  running.push(child);
  // Only the first start prints the administrator's password; later starts sign in with it too.
  password ??= /password: (\S+)/.exec(stdout())?.[1];
  const login = await fetch(`http://127.0.0.1:${port}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
  return { child, port, token: await login.text(), exited };
}

async function kill(server: Server): Promise<void> {
  server.child.kill('SIGKILL');
  await server.exited;
}

/** Stops a server with SIGTERM (it exits 0 once it closed the database). */
async function stop(server: Server): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

/** A request whose body the test sends piece by piece (its socket cut after the test). */
function slowRequest(
  server: Server,
  method: string,
  url: string,
  length: number,
  headers: Record<string, string> = {},
): SlowRequest {
  const { port, token } = server;
  return startSlowRequest({ port, token, method, path: url, length, headers, sockets });
}

/** A whole request through fetch. */
async function call(
  server: Server,
  method: string,
  url: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(`http://127.0.0.1:${server.port}${url}`, {
    method,
    headers: { 'x-auth': server.token, connection: 'close', ...headers },
    // A copy as a plain Uint8Array: the DOM types of fetch take no Buffer.
    ...(body && { body: new Uint8Array(body) }),
  });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

const STAGING = /^\..*\.fb-[0-9a-f]{12}\.tmp$/s;

/** Every path below `top` (relative), links not followed. */
function walk(top: string, rel = ''): string[] {
  const out: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(path.join(top, rel), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    out.push(p);
    if (e.isDirectory()) out.push(...walk(top, p));
  }
  return out;
}

/** Staging names left anywhere under the root or the data folder. */
function stagingLeft(): string[] {
  return [...walk(files).map((p) => `files/${p}`), ...walk(data).map((p) => `db/${p}`)].filter((p) =>
    STAGING.test(path.basename(p)),
  );
}

/** Records of writes or moves in progress, read from the database of a stopped server. */
async function recordsLeft(): Promise<{ staging: number; moves: number }> {
  const store = await openStore(path.join(data, 'fb.db'));
  try {
    return {
      staging: (await store.staging.orphaned([])).length,
      moves: (await store.moves.orphaned([])).length,
    };
  } finally {
    await store.close();
  }
}

/** Polls the file system until `probe` answers something: the event the test waits for. */
async function until<T>(probe: () => T | undefined | false): Promise<T> {
  for (;;) {
    const got = probe();
    if (got) return got;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A staging file in `folder` that has reached `size` bytes, once there is one. */
function stagingOf(folder: string, size = 1): string | undefined {
  for (const name of fs.readdirSync(folder)) {
    if (!STAGING.test(name)) continue;
    const st = fs.statSync(path.join(folder, name), { throwIfNoEntry: false });
    if (st && (st.isDirectory() || st.size >= size)) return name;
  }
  return undefined;
}

const hash = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
const fileHash = (file: string) => hash(fs.readFileSync(file));

/** Relative path → content hash (or "folder"/"link → target") of everything below `top`. */
function manifest(top: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of walk(top)) {
    const full = path.join(top, p);
    const st = fs.lstatSync(full);
    out[p] = st.isDirectory()
      ? 'folder'
      : st.isSymbolicLink()
        ? `link → ${fs.readlinkSync(full)}`
        : fileHash(full);
  }
  return out;
}

/** After a restart: nothing half done, nothing left behind (checked again once the server stopped). */
async function expectClean(server: Server): Promise<void> {
  expect(stagingLeft()).toEqual([]);
  await stop(server);
  expect(await recordsLeft()).toEqual({ staging: 0, moves: 0 });
  expect(stagingLeft()).toEqual([]);
}

// A generous bound, not a measure: two server starts and up to 128 MiB of disk work per test on
// a machine other tests keep busy.
describe('SIGKILL in the middle of', { timeout: 240_000 }, () => {
  it('a PUT over a file: the old content stays, the staging file goes, and the PUT again succeeds', async () => {
    const old = crypto.randomBytes(MiB);
    fs.writeFileSync(path.join(files, 'doc.bin'), old);
    const server = await start();
    const put = slowRequest(server, 'PUT', '/api/resources/doc.bin', 8 * MiB);
    await put.send(crypto.randomBytes(3 * MiB));
    await until(() => stagingOf(files, MiB));
    await kill(server);
    expect(stagingOf(files)).toBeDefined();

    const again = await start();
    expect(fileHash(path.join(files, 'doc.bin'))).toBe(hash(old));
    expect(fs.readdirSync(files)).toEqual(['doc.bin']);
    const body = crypto.randomBytes(8 * MiB);
    const retry = await call(again, 'PUT', '/api/resources/doc.bin', body);
    expect(retry.status, retry.body).toBe(200);
    expect(fileHash(path.join(files, 'doc.bin'))).toBe(hash(body));
    await expectClean(again);
  });

  it('a POST upload of a new file: no file and no staging file after the restart; the upload again succeeds', async () => {
    const server = await start();
    const post = slowRequest(server, 'POST', '/api/resources/new.bin', 8 * MiB);
    await post.send(crypto.randomBytes(3 * MiB));
    await until(() => stagingOf(files, MiB));
    await kill(server);

    const again = await start();
    expect(fs.readdirSync(files)).toEqual([]);
    const body = crypto.randomBytes(8 * MiB);
    const retry = await call(again, 'POST', '/api/resources/new.bin', body);
    expect(retry.status, retry.body).toBe(200);
    expect(fileHash(path.join(files, 'new.bin'))).toBe(hash(body));
    expect(fs.readdirSync(files)).toEqual(['new.bin']);
    await expectClean(again);
  });

  it('a tus upload: the target is untouched, and the upload resumes from the offset the server reports', async () => {
    const old = Buffer.from('the old file');
    fs.writeFileSync(path.join(files, 't.bin'), old);
    const body = crypto.randomBytes(8 * MiB);
    const tus = { 'tus-resumable': '1.0.0' };
    const server = await start();
    const created = await call(server, 'POST', '/api/tus/t.bin?override=true', undefined, {
      ...tus,
      'upload-length': String(body.length),
    });
    expect(created.status, created.body).toBe(201);
    const uploads = path.join(data, 'uploads');
    const part = fs.readdirSync(uploads).find((n) => n.endsWith('.part'))!;
    const patch = slowRequest(server, 'PATCH', '/api/tus/t.bin', body.length, {
      ...tus,
      'content-type': 'application/offset+octet-stream',
      'upload-offset': '0',
    });
    await patch.send(body.subarray(0, 3 * MiB));
    await until(() => (fs.statSync(path.join(uploads, part)).size >= MiB ? true : undefined));
    await kill(server);

    const again = await start();
    expect(fileHash(path.join(files, 't.bin'))).toBe(hash(old));
    expect(fs.readdirSync(files)).toEqual(['t.bin']);
    const head = await call(again, 'HEAD', '/api/tus/t.bin', undefined, tus);
    expect(head.status).toBe(200);
    const offset = Number(head.headers.get('upload-offset'));
    expect(offset).toBeGreaterThanOrEqual(MiB);
    expect(offset).toBeLessThanOrEqual(3 * MiB);
    // What the server reports is on the disk as it was sent.
    expect(fileHash(path.join(uploads, part))).toBe(hash(body.subarray(0, offset)));
    const rest = await call(again, 'PATCH', '/api/tus/t.bin', body.subarray(offset), {
      ...tus,
      'content-type': 'application/offset+octet-stream',
      'upload-offset': String(offset),
    });
    expect(rest.status, rest.body).toBe(204);
    expect(fileHash(path.join(files, 't.bin'))).toBe(hash(body));
    expect(fs.readdirSync(uploads)).toEqual([]);
    await expectClean(again);
  });

  it('a copy of a big file: no copy or a whole one, never part of one; the copy again succeeds', async () => {
    const big = crypto.randomBytes(96 * MiB);
    fs.writeFileSync(path.join(files, 'big.bin'), big);
    const server = await start();
    const copy = call(server, 'PATCH', '/api/resources/big.bin?action=copy&destination=%2Fcopy.bin');
    copy.catch(() => undefined);
    // Seen as soon as it has a byte; a copy done before the poll looked shows as its result.
    await until(() => stagingOf(files) ?? fs.existsSync(path.join(files, 'copy.bin')));
    await kill(server);

    const again = await start();
    // Killed before the rename (the usual case) there is no copy; after it, a whole one.
    const names = fs.readdirSync(files).sort();
    if (names.includes('copy.bin')) expect(fileHash(path.join(files, 'copy.bin'))).toBe(hash(big));
    else expect(names).toEqual(['big.bin']);
    expect(fileHash(path.join(files, 'big.bin'))).toBe(hash(big));
    const retry = await call(
      again,
      'PATCH',
      '/api/resources/big.bin?action=copy&destination=%2Fcopy.bin&override=true',
    );
    expect(retry.status, retry.body).toBe(200);
    expect(fileHash(path.join(files, 'copy.bin'))).toBe(hash(big));
    expect(fs.readdirSync(files).sort()).toEqual(['big.bin', 'copy.bin']);
    await expectClean(again);
  });

  it('a move of a folder across file systems: the folder is whole at one place, never in two halves; the move again succeeds', async () => {
    const mnt = path.join(files, 'mnt');
    fs.mkdirSync(mnt);
    if (!mountTmpfs(mnt, '256m', 'a move across file systems needs a second file system inside the root'))
      return;
    mounted = mnt;
    const src = path.join(files, 'dir');
    fs.mkdirSync(path.join(src, 'sub'), { recursive: true });
    // Many small files make the copy long enough to be caught in the middle; the big one, a
    // staging file of its own inside the copy.
    for (let i = 0; i < 600; i++) fs.writeFileSync(path.join(src, 'sub', `f${i}.txt`), `file ${i}\n`);
    fs.writeFileSync(path.join(src, 'big.bin'), crypto.randomBytes(32 * MiB));
    fs.symlinkSync('sub/f1.txt', path.join(src, 'link'));
    const before = manifest(src);

    const server = await start();
    const move = call(server, 'PATCH', '/api/resources/dir?action=rename&destination=%2Fmnt%2Fdir');
    move.catch(() => undefined);
    // The copy's folder has appeared under its staging name beside the destination.
    await until(() => stagingOf(mnt) ?? fs.existsSync(path.join(mnt, 'dir')));
    await kill(server);

    const again = await start();
    const atSource = fs.existsSync(src);
    const atDest = fs.existsSync(path.join(mnt, 'dir'));
    // One whole folder, at one place.
    expect(atSource !== atDest, `at the source: ${atSource}, at the destination: ${atDest}`).toBe(true);
    expect(manifest(atSource ? src : path.join(mnt, 'dir'))).toEqual(before);
    expect(fs.readdirSync(mnt).sort()).toEqual(atDest ? ['dir'] : []);
    if (atSource) {
      const retry = await call(again, 'PATCH', '/api/resources/dir?action=rename&destination=%2Fmnt%2Fdir');
      expect(retry.status, retry.body).toBe(200);
    }
    expect(fs.existsSync(src)).toBe(false);
    expect(manifest(path.join(mnt, 'dir'))).toEqual(before);
    expect(fs.readdirSync(files).sort()).toEqual(['mnt']);
    await expectClean(again);
  });
});
