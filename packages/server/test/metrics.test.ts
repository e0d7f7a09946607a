import http from 'node:http';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { defaultConfig } from '../src/config/defaults.js';
import { loadConfig } from '../src/config/load.js';
import { openStore } from '../src/store/index.js';
import { ADMIN_PASSWORD, startTestApp, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Every label value of the exposition text, to check none carries a request path. */
function labelValues(text: string): string[] {
  return [...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => `${m[1]}=${m[2]}`);
}

function get(url: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }),
        );
      })
      .on('error', reject);
  });
}

describe('/metrics on the main listener', () => {
  it('answers 404, not the app page, when metrics are off', async () => {
    t = await startTestApp();
    for (const token of [undefined, t.adminToken]) {
      const res = await t.request(token, { method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain('<html');
      expect(res.body).not.toContain('http_requests_total');
    }
  });

  it('asks for sign-in, refuses non-admins and serves administrators', async () => {
    t = await startTestApp({ metrics: true });
    await fs.mkdir(path.join(t.root, 'secret-folder-name'));
    await fs.writeFile(path.join(t.root, 'secret-folder-name', 'private-file.txt'), 'hello');
    await t.createUser({ username: 'bob', scope: '.', perm: { admin: false } as never });
    const bob = await t.login('bob');

    expect((await t.request(undefined, { method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect((await t.request(bob, { method: 'GET', url: '/metrics' })).statusCode).toBe(403);

    for (let i = 0; i < 3; i++) {
      const res = await t.request(t.adminToken, {
        method: 'GET',
        url: '/api/resources/secret-folder-name/private-file.txt',
      });
      expect(res.statusCode).toBe(200);
    }
    const missing = await t.request(t.adminToken, { method: 'GET', url: '/api/resources/no-such-thing' });
    expect(missing.statusCode).toBe(404);
    const raw = await t.request(t.adminToken, {
      method: 'GET',
      url: '/api/raw/secret-folder-name/private-file.txt',
    });
    expect(raw.statusCode).toBe(200);

    const res = await t.request(t.adminToken, { method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(text).toContain('http_requests_total{route="/api/resources/*",method="GET",status="200"} 3');
    expect(text).toContain('http_requests_total{route="/api/resources/*",method="GET",status="404"} 1');
    expect(text).toContain('http_requests_total{route="/metrics",method="GET",status="401"} 1');
    expect(text).toContain('http_requests_total{route="/metrics",method="GET",status="403"} 1');
    expect(text).toMatch(
      /http_request_duration_seconds_count\{route="\/api\/resources\/\*",method="GET"\} 4/,
    );
    // The raw download's five body bytes are counted.
    expect(text).toMatch(/http_response_bytes_total\{route="\/api\/raw\/\*",method="GET"\} 5\b/);
    expect(text).toMatch(/^filebrowser_sessions_active 2$/m);
    expect(text).toMatch(/^filebrowser_uploads_pending 0$/m);
    expect(text).toContain(`filebrowser_instance_info{instance="${t.ctx.store.instance.id}"} 1`);
    expect(text).toMatch(/^filebrowser_previews_queued 0$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(/^process_resident_memory_bytes /m);
    for (const label of labelValues(text)) {
      expect(label).not.toMatch(/secret-folder-name|private-file|no-such-thing/);
    }
  });

  it("takes an administrator's full API token, not a read-only one", async () => {
    t = await startTestApp({ metrics: true });
    const mint = async (readOnly: boolean) => {
      const res = await t!.request(t!.adminToken, {
        method: 'POST',
        url: '/api/tokens',
        payload: { name: `scrape-${readOnly}`, expiresInDays: 0, readOnly, current_password: ADMIN_PASSWORD },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ secret: string }>().secret;
    };
    const scrape = async (secret: string) =>
      t!.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${secret}` } });
    const full = await scrape(await mint(false));
    expect(full.statusCode).toBe(200);
    expect(full.body).toContain('http_requests_total');
    expect((await scrape(await mint(true))).statusCode).toBe(403);
  });

  it('counts a pending resumable upload', async () => {
    t = await startTestApp({ metrics: true });
    const created = await t.request(t.adminToken, {
      method: 'POST',
      url: '/api/tus/upload.bin',
      headers: { 'Upload-Length': '10', 'Tus-Resumable': '1.0.0' },
    });
    expect(created.statusCode).toBe(201);
    const res = await t.request(t.adminToken, { method: 'GET', url: '/metrics' });
    expect(res.body).toMatch(/^filebrowser_uploads_pending 1$/m);
  });
});

describe('/metrics on a separate address', () => {
  it('serves metrics there without sign-in and nothing at /metrics of the main listener', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-metrics-'));
    await fs.mkdir(path.join(base, 'root'));
    const store = await openStore(path.join(base, 'fb.db'));
    const { app, metricsListener } = await buildApp(
      {
        ...defaultConfig(),
        root: path.join(base, 'root'),
        database: path.join(base, 'fb.db'),
        cacheDir: path.join(base, 'cache'),
        webDist: path.join(base, 'web'),
        metrics: true,
        metricsAddress: '127.0.0.1:0',
      },
      store,
    );
    let url: string | undefined;
    try {
      await app.ready();
      url = metricsListener?.url();
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

      const main = await app.inject({ method: 'GET', url: '/metrics' });
      expect(main.statusCode).toBe(404);
      expect(main.body).not.toContain('http_requests_total');

      const scraped = await get(url!);
      expect(scraped.status).toBe(200);
      expect(scraped.type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(scraped.body).toContain('http_requests_total{route="/metrics",method="GET",status="404"} 1');
      expect((await get(url!.replace(/\/metrics$/, '/'))).status).toBe(404);
    } finally {
      await app.close();
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
    // Closing the app closed the metrics listener too.
    await expect(get(url!)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('metrics configuration', () => {
  const places = { cwd: os.tmpdir(), home: os.tmpdir() };

  it('is off by default and read from flags and FB_* variables', () => {
    expect(loadConfig([], {}, places)).toMatchObject({ metrics: false, metricsAddress: '' });
    expect(loadConfig(['--metrics'], {}, places).metrics).toBe(true);
    expect(loadConfig([], { FB_METRICS: 'true', FB_METRICS_ADDRESS: '[::1]:9180' }, places)).toMatchObject({
      metrics: true,
      metricsAddress: '[::1]:9180',
    });
  });

  it('refuses a metrics address that is not host:port', () => {
    for (const bad of ['9180', 'localhost', '127.0.0.1:99999', 'http://127.0.0.1:9180']) {
      expect(() => loadConfig(['--metricsAddress', bad], {}, places)).toThrow(
        /invalid value .* for metricsAddress: expected host:port/,
      );
    }
  });
});

describe('/health', () => {
  it('answers OK while the database answers, 503 once it does not', async () => {
    t = await startTestApp();
    const ok = await t.request(undefined, { method: 'GET', url: '/health' });
    expect(ok.statusCode).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ status: 'OK', instance: t.ctx.store.instance.id });

    await t.ctx.store.close();
    const down = await t.request(undefined, { method: 'GET', url: '/health' });
    expect(down.statusCode).toBe(503);
    expect(JSON.parse(down.body)).toEqual({
      status: 'unavailable',
      reason: 'the database does not answer',
      instance: t.ctx.store.instance.id,
    });
  });
});
