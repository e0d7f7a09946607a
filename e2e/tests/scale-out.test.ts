import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../packages/server/test/postgres/cluster.js';
import { freePort, haveTool } from '../../packages/server/test/tools.js';
import { builtServer } from '../support/built.js';
import { startListening } from '../support/listening.js';
import { slowRequest } from '../support/slow-request.js';

/**
 * Two real server processes on one PostgreSQL database and one served folder, behind Debian's
 * nginx in round robin without sticky sessions (docs/scale-out.md): what one instance does, the
 * other honours, whichever of them the proxy picks for the next request. The in-process version
 * of these checks is packages/server/test/instances.test.ts; this one goes through real
 * processes, a real proxy and real sockets, and kills one instance with SIGKILL at the end.
 */
const main = builtServer();

const MiB = 1024 * 1024;
const LOGIN_RATE_LIMIT = 3;
const USER_PASSWORD = 'scale-out-user-password';

interface Instance {
  child: ChildProcess;
  port: number;
  /** The id it names in /health. */
  id: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

let dir: string;
let root: string;
let env: NodeJS.ProcessEnv;
let cluster: Cluster | undefined;
let database: string;
let one: Instance;
let two: Instance;
let nginx: ChildProcess | undefined;
let proxy: string;
let adminPassword: string;
let adminToken: string;
const running: ChildProcess[] = [];
const sockets: net.Socket[] = [];

/** Starts `filebrowser` on the shared database and folder and waits for its "Listening on" line. */
async function startInstance(): Promise<Instance> {
  const port = await freePort();
  const { child, stdout, exited } = await startListening(
    [
      main,
      ...['-d', database, '-r', root, '-a', '127.0.0.1', '-p', String(port), '-l', ''],
      ...['--loginRateLimit', String(LOGIN_RATE_LIMIT)],
    ],
    { cwd: dir, env },
  );
  running.push(child);
  const health = await fetch(`http://127.0.0.1:${port}/health`);
  const { instance } = (await health.json()) as { instance: string };
  return { child, port, id: instance, stdout, exited };
}

/** nginx in the foreground, everything it writes inside `folder`, both instances upstream. */
async function startNginx(folder: string, ports: number[]): Promise<number> {
  const port = await freePort();
  // As root, nginx's workers run as nobody: they must reach their temp folders inside this one.
  fs.chmodSync(folder, 0o755);
  const conf = path.join(folder, 'nginx.conf');
  fs.writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${folder}/nginx.pid;
error_log ${folder}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${folder}/client_body;
  proxy_temp_path ${folder}/proxy;
  fastcgi_temp_path ${folder}/fastcgi;
  uwsgi_temp_path ${folder}/uwsgi;
  scgi_temp_path ${folder}/scgi;
  upstream filebrowser {
${ports.map((p) => `    server 127.0.0.1:${p};`).join('\n')}
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://filebrowser;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      client_max_body_size 0;
      proxy_request_buffering off;
      proxy_buffering off;
      # A request that never reached a killed instance goes to the other one.
      proxy_next_upstream error timeout;
    }
  }
}
`,
  );
  nginx = spawn('nginx', ['-p', folder, '-c', conf, '-e', path.join(folder, 'error.log')]);
  running.push(nginx);
  let err = '';
  nginx.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  let exit: number | null | undefined;
  nginx.on('exit', (code) => (exit = code));
  // nginx says nothing when it is ready: it is once it accepts a connection.
  for (let attempt = 0; ; attempt++) {
    if (exit !== undefined) throw new Error(`nginx exited with ${exit}: ${err}`);
    if (await accepts(port)) return port;
    if (attempt > 3000) throw new Error(`nginx does not accept connections on ${port}: ${err}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A request through the proxy (or, with `base`, straight to one instance). */
async function call(
  method: string,
  url: string,
  opts: { token?: string; body?: Buffer | string; headers?: Record<string, string>; base?: string } = {},
): Promise<{ status: number; body: string; headers: Headers }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers['x-auth'] = opts.token;
  const res = await fetch(`${opts.base ?? proxy}${url}`, {
    method,
    headers,
    // A copy as a plain Uint8Array: the DOM types of fetch take no Buffer.
    ...(opts.body !== undefined && {
      body: typeof opts.body === 'string' ? opts.body : new Uint8Array(opts.body),
    }),
  });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

const direct = (instance: Instance) => `http://127.0.0.1:${instance.port}`;

async function login(username: string, password: string, base?: string) {
  return call('POST', '/api/login', {
    body: JSON.stringify({ username, password }),
    headers: { 'content-type': 'application/json' },
    ...(base && { base }),
  });
}

async function createUser(username: string, data: Record<string, unknown>): Promise<void> {
  const res = await call('POST', '/api/users', {
    token: adminToken,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      what: 'user',
      which: [],
      current_password: adminPassword,
      data: { username, password: USER_PASSWORD, ...data },
    }),
  });
  expect(res.status, res.body).toBe(201);
}

const basic = (username: string) => `Basic ${Buffer.from(`${username}:${USER_PASSWORD}`).toString('base64')}`;

const hash = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

describe.runIf(haveTool('nginx', 'runs two instances behind a round-robin proxy'))(
  'two instances behind nginx on one database and one folder',
  () => {
    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-scale-out-'));
      root = path.join(dir, 'files');
      fs.mkdirSync(root);
      fs.mkdirSync(path.join(dir, 'home'));
      fs.mkdirSync(path.join(dir, 'nginx'));
      // No FB_* variable or config file of the machine running the tests may leak in.
      env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FB_')));
      env.HOME = path.join(dir, 'home');

      cluster = await startCluster();
      database = await cluster.createDatabase();
      // The first start makes the schema and the administrator; the second finds both.
      one = await startInstance();
      adminPassword = /password: (\S+)/.exec(one.stdout())![1]!;
      two = await startInstance();
      expect(two.stdout()).not.toContain('password');
      proxy = `http://127.0.0.1:${await startNginx(path.join(dir, 'nginx'), [one.port, two.port])}`;

      const res = await login('admin', adminPassword);
      expect(res.status, res.body).toBe(200);
      adminToken = res.body;
    });

    afterAll(async () => {
      for (const socket of sockets.splice(0)) socket.destroy();
      // nginx's master first, and gently: killed, it would leave its worker behind.
      if (nginx && nginx.exitCode === null && nginx.signalCode === null) {
        const gone = new Promise((resolve) => nginx!.once('exit', resolve));
        nginx.kill('SIGTERM');
        await gone;
      }
      for (const child of running.splice(0)) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await gone;
      }
      await cluster?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('both answer: /health names each, and round robin reaches both', async () => {
      expect(one.id).not.toBe(two.id);
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const res = await call('GET', '/health');
        expect(res.status).toBe(200);
        const body = JSON.parse(res.body) as { status: string; instance: string };
        expect(body.status).toBe('OK');
        seen.add(body.instance);
      }
      expect([...seen].sort()).toEqual([one.id, two.id].sort());
    });

    it('a session made through the proxy works on every request, and a logout ends it on both', async () => {
      fs.mkdirSync(path.join(root, 'carol'));
      await createUser('carol', { scope: '/carol' });
      const made = await login('carol', USER_PASSWORD);
      expect(made.status, made.body).toBe(200);
      const token = made.body;
      for (let i = 0; i < 4; i++) expect((await call('GET', '/api/resources/', { token })).status).toBe(200);
      // Straight to each, so that both are known to have taken it, whatever the proxy picked.
      for (const instance of [one, two])
        expect((await call('GET', '/api/resources/', { token, base: direct(instance) })).status).toBe(200);

      expect((await call('POST', '/api/logout', { token })).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await call('GET', '/api/resources/', { token })).status).toBe(401);
      for (const instance of [one, two])
        expect((await call('GET', '/api/resources/', { token, base: direct(instance) })).status).toBe(401);
    });

    it('counts wrong passwords across the instances: 429 at the limit, not at twice the limit', async () => {
      // The test's own address is loopback, a trusted proxy: each series names a client address of
      // its own, so that it is throttled alone and the other tests' logins are never refused.
      const wrong = (username: string, address: string, base?: string) =>
        call('POST', '/api/login', {
          body: JSON.stringify({ username, password: 'wrong-password' }),
          headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
          ...(base && { base }),
        });
      // Through the proxy: round robin sends them to one and the other in turn.
      for (let i = 0; i < LOGIN_RATE_LIMIT; i++)
        expect((await wrong('mallory', '198.51.100.7')).status).toBe(403);
      const refused = await wrong('mallory', '198.51.100.7');
      expect(refused.status, refused.body).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

      // Straight to each, to know which instance counted which guess: the one that did not count
      // the most still refuses once both together reached the limit.
      const address = '198.51.100.8';
      expect((await wrong('trudy', address, direct(one))).status).toBe(403);
      expect((await wrong('trudy', address, direct(one))).status).toBe(403);
      expect((await wrong('trudy', address, direct(two))).status).toBe(403);
      expect((await wrong('trudy', address, direct(two))).status).toBe(429);
      expect((await wrong('trudy', address, direct(one))).status).toBe(429);
    });

    it('keeps parallel uploads through both instances within a quota', async () => {
      const quota = 1000;
      const size = 300;
      fs.mkdirSync(path.join(root, 'dave'));
      await createUser('dave', { scope: '/dave', quota });
      const made = await login('dave', USER_PASSWORD);
      expect(made.status, made.body).toBe(200);
      const token = made.body;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          call('POST', `/api/resources/part${i}.bin`, { token, body: crypto.randomBytes(size) }),
        ),
      );
      const statuses = results.map((r) => r.status);
      for (const r of results) expect([200, 507], r.body).toContain(r.status);
      for (const r of results.filter((r) => r.status === 507)) expect(r.body).toMatch(/Quota exceeded/);

      const stored = fs.readdirSync(path.join(root, 'dave'));
      const bytes = stored.reduce((sum, name) => sum + fs.statSync(path.join(root, 'dave', name)).size, 0);
      expect(bytes).toBeLessThanOrEqual(quota);
      // No room is lost either: as many fit as the quota holds, and only those are on the disk (a
      // write's count and the release of its hold are one step, so none counts twice meanwhile).
      expect(statuses.filter((s) => s === 200)).toHaveLength(Math.floor(quota / size));
      expect(stored).toHaveLength(Math.floor(quota / size));
      expect(bytes).toBe(Math.floor(quota / size) * size);
    });

    it('honours a WebDAV lock taken through one instance on the other', async () => {
      fs.mkdirSync(path.join(root, 'team'));
      fs.writeFileSync(path.join(root, 'team', 'plan.txt'), 'the plan');
      await createUser('erin', { scope: '/team' });
      await createUser('frank', { scope: '/team' });
      const lock = await call('LOCK', '/dav/plan.txt', {
        headers: {
          authorization: basic('erin'),
          'content-type': 'application/xml; charset=utf-8',
          depth: '0',
          timeout: 'Second-600',
        },
        body:
          '<?xml version="1.0" encoding="utf-8"?>' +
          '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>' +
          '<D:locktype><D:write/></D:locktype><D:owner>erin</D:owner></D:lockinfo>',
      });
      expect(lock.status, lock.body).toBe(200);
      const lockToken = lock.headers.get('lock-token');
      expect(lockToken).toMatch(/^<opaquelocktoken:.+>$/);

      const put = (base?: string) =>
        call('PUT', '/dav/plan.txt', {
          headers: { authorization: basic('frank') },
          body: "frank's plan",
          ...(base && { base }),
        });
      for (let i = 0; i < 4; i++) {
        const res = await put();
        expect(res.status, res.body).toBe(423);
      }
      for (const instance of [one, two]) expect((await put(direct(instance))).status).toBe(423);
      expect(fs.readFileSync(path.join(root, 'team', 'plan.txt'), 'utf8')).toBe('the plan');

      // The holder, naming the token, writes through either.
      const own = await call('PUT', '/dav/plan.txt', {
        headers: { authorization: basic('erin'), if: `(${lockToken})` },
        body: "erin's plan",
        base: direct(two),
      });
      expect([200, 201, 204], own.body).toContain(own.status);
      expect(fs.readFileSync(path.join(root, 'team', 'plan.txt'), 'utf8')).toBe("erin's plan");
      const unlock = await call('UNLOCK', '/dav/plan.txt', {
        headers: { authorization: basic('erin'), 'lock-token': lockToken! },
        base: direct(one),
      });
      expect(unlock.status, unlock.body).toBe(204);
      expect((await put()).status).toBe(204);
    });

    it("shows a file written through one instance in the other's next listing", async () => {
      fs.mkdirSync(path.join(root, 'shared'));
      const names = async (instance: Instance) => {
        const res = await call('GET', '/api/resources/shared/', {
          token: adminToken,
          base: direct(instance),
        });
        expect(res.status, res.body).toBe(200);
        return (JSON.parse(res.body) as { items: Array<{ name: string }> }).items.map((i) => i.name);
      };
      // Listed once on the second before, so that a listing it kept would show as stale.
      expect(await names(two)).toEqual([]);
      const made = await call('POST', '/api/resources/shared/new.txt', {
        token: adminToken,
        body: 'new',
        base: direct(one),
      });
      expect(made.status, made.body).toBe(200);
      expect(await names(two)).toEqual(['new.txt']);
    });

    it('lists and cancels through the other instance a job that runs on the first', async () => {
      // An archive download followed as a job, whose client reads nothing: it stays running.
      fs.mkdirSync(path.join(root, 'archive-me'));
      const file = fs.openSync(path.join(root, 'archive-me', 'noise.bin'), 'w');
      for (let i = 0; i < 32; i++) fs.writeSync(file, crypto.randomBytes(1024 * 1024));
      fs.closeSync(file);
      const id = 'scale-out-job-1';
      const download = http.get(`${direct(one)}/api/raw/archive-me?algo=tar&progress=${id}`, {
        headers: { 'x-auth': adminToken },
      });
      // Paused, the response is read no further until the job is cancelled.
      const response = new Promise<http.IncomingMessage>((resolve, reject) => {
        download.on('error', reject);
        download.on('response', (res) => {
          res.pause();
          resolve(res);
        });
      });
      const onTwo = (method: string, url: string) =>
        call(method, url, { token: adminToken, base: direct(two) });
      // Recorded when it starts: the other instance finds it as soon as the first has it.
      let job = await onTwo('GET', `/api/jobs/${id}`);
      while (job.status === 404) job = await onTwo('GET', `/api/jobs/${id}`);
      expect(job.status, job.body).toBe(200);
      expect(JSON.parse(job.body)).toMatchObject({ id, action: 'archive', state: 'running' });
      const listed = JSON.parse((await onTwo('GET', '/api/jobs')).body) as Array<{ id: string }>;
      expect(listed.map((j) => j.id)).toContain(id);

      const cancelled = await onTwo('DELETE', `/api/jobs/${id}`);
      expect(cancelled.status, cancelled.body).toBe(200);
      expect(JSON.parse(cancelled.body)).toMatchObject({ id, state: 'cancelled' });
      // The first instance cut the download it was serving: read on, it ends short.
      const res = await response;
      const ended = new Promise<boolean>((resolve) => {
        res.on('close', () => resolve(res.complete));
        res.on('error', () => undefined);
      });
      res.resume();
      expect(await ended).toBe(false);
      const after = await call('GET', `/api/jobs/${id}`, { token: adminToken, base: direct(one) });
      expect(JSON.parse(after.body)).toMatchObject({ id, state: 'cancelled' });
    });

    // Last: it kills the first instance.
    it('goes on with a tus upload through the other instance after the first is killed while writing it', async () => {
      const body = crypto.randomBytes(8 * MiB);
      const tus = { 'tus-resumable': '1.0.0' };
      const octets = { ...tus, 'content-type': 'application/offset+octet-stream' };
      const created = await call('POST', '/api/tus/upload.bin', {
        token: adminToken,
        headers: { ...tus, 'upload-length': String(body.length) },
      });
      expect(created.status, created.body).toBe(201);
      // Straight to the first instance, to know which one writes: a whole first part, then a second
      // one the test keeps open, so that the instance dies holding the upload's lock.
      const part = await call('PATCH', '/api/tus/upload.bin', {
        token: adminToken,
        headers: { ...octets, 'upload-offset': '0' },
        body: body.subarray(0, MiB),
        base: direct(one),
      });
      expect(part.status, part.body).toBe(204);
      const staging = path.join(root, '.filebrowser-uploads');
      const file = fs.readdirSync(staging).find((n) => n.endsWith('.part'))!;
      const open = slowRequest({
        port: one.port,
        token: adminToken,
        method: 'PATCH',
        path: '/api/tus/upload.bin',
        length: body.length - MiB,
        headers: { ...octets, 'upload-offset': String(MiB) },
        sockets,
      });
      await open.send(body.subarray(MiB, 4 * MiB));
      // The event waited for: the second part is being written to the shared staging file.
      while (fs.statSync(path.join(staging, file)).size < 2 * MiB)
        await new Promise((resolve) => setTimeout(resolve, 10));
      one.child.kill('SIGKILL');
      await one.exited;

      for (let i = 0; i < 4; i++) {
        const health = await call('GET', '/health');
        expect(health.status).toBe(200);
        expect((JSON.parse(health.body) as { instance: string }).instance).toBe(two.id);
      }
      const head = await call('HEAD', '/api/tus/upload.bin', { token: adminToken, headers: tus });
      expect(head.status).toBe(200);
      const offset = Number(head.headers.get('upload-offset'));
      expect(offset).toBeGreaterThanOrEqual(2 * MiB);
      expect(offset).toBeLessThanOrEqual(4 * MiB);
      // What the other instance reports is on the disk as it was sent.
      expect(hash(fs.readFileSync(path.join(staging, file)).subarray(0, offset))).toBe(
        hash(body.subarray(0, offset)),
      );
      const rest = await call('PATCH', '/api/tus/upload.bin', {
        token: adminToken,
        headers: { ...octets, 'upload-offset': String(offset) },
        body: body.subarray(offset),
      });
      expect(rest.status, rest.body).toBe(204);
      expect(hash(fs.readFileSync(path.join(root, 'upload.bin')))).toBe(hash(body));
      expect(fs.readdirSync(staging)).toEqual([]);
    });
  },
);
