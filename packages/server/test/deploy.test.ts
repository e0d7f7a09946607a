import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ADMIN_PASSWORD, startTestApp, type TestApp } from './helpers.js';
import { ALL } from './files-helpers.js';
import { freePort, haveTool } from './tools.js';

/** The files in deploy/ that can be checked without a container engine, checked for real. */
const deploy = path.resolve(import.meta.dirname, '../../../deploy');

interface Proxy {
  /** The public URL of the app through the proxy, base URL included. */
  url: string;
  stop(): Promise<void>;
}

/** Starts a proxy program and resolves once its stderr says it serves (it has bound its port). */
function startProgram(command: string, args: string[], ready: string, env = process.env) {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const started = new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes(ready)) resolve();
    });
    exited.then(
      () => reject(new Error(`${command} exited: ${err}`)),
      () => undefined,
    );
  });
  return {
    started,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/**
 * What every recipe must get right (docs/operations.md#reverse-proxies), asked through the proxy
 * of a real server: the base URL, a body above the tus chunk size, the shell's WebSocket.
 */
function proxyChecks(baseURL: string, startProxy: (upstream: number, dir: string) => Promise<Proxy>): void {
  let t: TestApp;
  let dir: string;
  let proxy: Proxy;

  beforeAll(async () => {
    t = await startTestApp({ baseURL, disableExec: false, execPath: '/usr/bin:/bin' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-proxy-'));
    proxy = await startProxy((t.app.server.address() as net.AddressInfo).port, dir);
  });

  afterAll(async () => {
    await proxy?.stop();
    await t?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('passes the health check, the login and a listing', async () => {
    const health = await fetch(`${proxy.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'OK', instance: t.ctx.store.instance.id });

    fs.writeFileSync(path.join(t.root, 'note.txt'), 'through the proxy');
    const login = await fetch(`${proxy.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
    });
    expect(login.status).toBe(200);
    const listing = await fetch(`${proxy.url}/api/resources/`, { headers: { 'X-Auth': await login.text() } });
    expect(listing.status).toBe(200);
    const body = (await listing.json()) as { items: { name: string }[] };
    expect(body.items.map((i) => i.name)).toEqual(['note.txt']);
  });

  it('lets an upload request larger than the tus chunk size through', async () => {
    const size = 12 * 1024 * 1024;
    const res = await fetch(`${proxy.url}/api/resources/big.bin`, {
      method: 'POST',
      headers: { 'X-Auth': t.adminToken },
      body: Buffer.alloc(size, 7),
    });
    expect(res.status).toBe(200);
    expect(fs.statSync(path.join(t.root, 'big.bin')).size).toBe(size);
  });

  it('upgrades the shell to a WebSocket for the browser of this origin only', async () => {
    const user = await t.createUser({
      username: 'carol',
      scope: '/',
      perm: { ...ALL, execute: true },
      commands: ['echo'],
    });
    expect(user.commands).toEqual(['echo']);
    const token = await t.login('carol');
    const shell = (origin: string) =>
      new Promise<{ status?: number; lines: string[] }>((resolve, reject) => {
        const ws = new WebSocket(`${proxy.url.replace('http:', 'ws:')}/api/command/`, {
          headers: { 'x-auth': token },
          origin,
        });
        const lines: string[] = [];
        ws.on('unexpected-response', (_req, res) => {
          res.resume();
          resolve({ status: res.statusCode, lines });
        });
        ws.on('open', () => ws.send('echo through the proxy'));
        ws.on('message', (data) => lines.push((data as Buffer).toString('utf8')));
        ws.on('close', () => resolve({ lines }));
        ws.on('error', (err) => {
          if (!/Unexpected server response/.test(err.message)) reject(err);
        });
      });
    // The browser's Origin is the proxy's host and port, which must reach the server in Host.
    const { lines } = await shell(new URL(proxy.url).origin);
    expect(lines).toEqual(['through the proxy']);
    expect((await shell('http://evil.example')).status).toBe(403);
  });
}

describe.runIf(haveTool('nginx', 'runs the nginx recipe of docs/operations.md'))(
  'deploy/nginx/filebrowser.conf in front of a real server at /files',
  () => {
    proxyChecks('/files', async (upstream, dir) => {
      const port = await freePort();
      // The recipe as shipped, with only its addresses changed.
      const recipe = fs
        .readFileSync(path.join(deploy, 'nginx/filebrowser.conf'), 'utf8')
        .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${upstream};`)
        .replace('listen 80;', `listen 127.0.0.1:${port};`);
      fs.writeFileSync(path.join(dir, 'site.conf'), recipe);
      const conf = path.join(dir, 'nginx.conf');
      const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
        .map((k) => `${k}_temp_path ${path.join(dir, k)};`)
        .join('\n');
      fs.writeFileSync(
        conf,
        [
          // Workers run as this test's user (root in CI, when the directive means anything).
          `user ${os.userInfo().username};`,
          'daemon off;',
          'worker_processes 1;',
          `pid ${path.join(dir, 'nginx.pid')};`,
          'error_log stderr notice;',
          'events {}',
          `http { access_log off; ${temp} include ${path.join(dir, 'site.conf')}; }`,
        ].join('\n'),
      );
      const test = spawnSync('nginx', ['-t', '-p', dir, '-c', conf], { encoding: 'utf8' });
      expect(test.stderr).toContain('test is successful');
      expect(test.status).toBe(0);
      // nginx has bound its port before it starts the workers, and says so at level notice.
      const nginx = startProgram('nginx', ['-p', dir, '-c', conf], 'start worker process');
      await nginx.started;
      return { url: `http://127.0.0.1:${port}/files`, stop: nginx.stop };
    });
  },
);

describe.runIf(haveTool('caddy', 'runs the Caddy recipe of docs/operations.md'))(
  'deploy/caddy/Caddyfile in front of a real server',
  () => {
    proxyChecks('', async (upstream, dir) => {
      const port = await freePort();
      // The shipped file, with the admin endpoint (a fixed port) off so tests never collide.
      const file = path.join(dir, 'Caddyfile');
      fs.writeFileSync(
        file,
        '{\n\tadmin off\n}\n' + fs.readFileSync(path.join(deploy, 'caddy/Caddyfile'), 'utf8'),
      );
      const env = {
        ...process.env,
        HOME: dir,
        XDG_DATA_HOME: dir,
        XDG_CONFIG_HOME: dir,
        SITE_ADDRESS: `http://127.0.0.1:${port}`,
        FILEBROWSER_UPSTREAM: `127.0.0.1:${upstream}`,
      };
      const valid = spawnSync('caddy', ['validate', '--adapter', 'caddyfile', '--config', file], {
        encoding: 'utf8',
        env,
      });
      expect(valid.status, valid.stderr).toBe(0);
      const caddy = startProgram(
        'caddy',
        ['run', '--adapter', 'caddyfile', '--config', file],
        'serving initial configuration',
        env,
      );
      await caddy.started;
      return { url: `http://127.0.0.1:${port}`, stop: caddy.stop };
    });
  },
);

describe.runIf(haveTool('systemd-analyze', 'checks the systemd unit'))(
  'deploy/systemd/filebrowser.service',
  () => {
    it('passes systemd-analyze verify without a warning, hardened as documented', () => {
      const unit = fs.readFileSync(path.join(deploy, 'systemd/filebrowser.service'), 'utf8');
      for (const setting of [
        'NoNewPrivileges=yes',
        'ProtectSystem=strict',
        'ReadWritePaths=/srv/files',
        'PrivateTmp=yes',
        'CapabilityBoundingSet=\n',
      ]) {
        expect(unit).toContain(setting);
      }
      // verify also checks that the program exists: here the package's own bin script stands in
      // for the installed /opt/filebrowser/bin/filebrowser.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-unit-'));
      try {
        const bin = path.resolve(import.meta.dirname, '../bin/filebrowser');
        const file = path.join(dir, 'filebrowser.service');
        fs.writeFileSync(
          file,
          unit.replace('ExecStart=/opt/filebrowser/bin/filebrowser', `ExecStart=${bin}`),
        );
        const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
        expect(`${r.stdout}${r.stderr}`).toBe('');
        expect(r.status).toBe(0);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
