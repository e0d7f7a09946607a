import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './helpers.js';

/** A request over a real socket: inject() normalises dot segments the way browsers do, curl does not. */
async function rawGet(
  t: TestApp,
  rawPath: string,
): Promise<{ status: number; location?: string; body: string }> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: rawPath }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body }));
      })
      .on('error', reject);
  });
}

const INDEX = `<!doctype html><html><head><meta charset="utf-8"><title>File Browser</title>
<meta name="theme-color" content="#2979ff"><!-- FB_STARTUP -->
<script type="module" crossorigin src="./assets/index-abc123.js"></script>
<link rel="stylesheet" href="./assets/index-abc123.css"></head><body><div id="app"></div></body></html>`;

let t: TestApp;
async function withWeb(overrides = {}) {
  t = await startTestApp(overrides);
  const dist = t.ctx.config.webDist;
  await fs.mkdir(path.join(dist, 'assets'), { recursive: true });
  await fs.mkdir(path.join(dist, 'img'), { recursive: true });
  await fs.writeFile(path.join(dist, 'index.html'), INDEX);
  await fs.writeFile(path.join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
  await fs.writeFile(path.join(dist, 'img', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
}
afterEach(async () => {
  await t.close();
});

function startupOf(html: string) {
  const m = html.match(/<script id="filebrowser-startup" type="application\/json">(.*?)<\/script>/s);
  return JSON.parse(m![1]!) as Record<string, unknown>;
}

describe('the page and static files', () => {
  beforeEach(() => withWeb());

  it('serves /health with the API CSP', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(`{"status":"OK","instance":"${t.ctx.store.instance.id}"}`);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
  });

  it('renders the page with the start-up object as data, under a CSP without inline scripts', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/files/some/where' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    // Scripts only as the page names them (security-active-content.test.ts has the rest).
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9+/]{22}==' 'strict-dynamic'(;|$)/);
    expect(csp).not.toContain("unsafe-inline'; script");
    const startup = startupOf(res.body);
    expect(Object.keys(startup)).toEqual(
      expect.arrayContaining([
        'AuthMethod',
        'BaseURL',
        'CSS',
        'Color',
        'DisableExternal',
        'DisableUsedPercentage',
        'EnableExec',
        'EnableThumbs',
        'HideLoginButton',
        'LoginPage',
        'LogoutPage',
        'Name',
        'NoAuth',
        'ReCaptcha',
        'ResizePreview',
        'Signup',
        'StaticURL',
        'Theme',
        'TusSettings',
        'Version',
      ]),
    );
    expect(startup).toMatchObject({
      AuthMethod: 'json',
      LoginPage: true,
      StaticURL: '/static',
      EnableExec: false,
    });
    expect(res.body).toContain('src="/static/assets/index-abc123.js"');
  });

  it('escapes branding text in the title and the data block', async () => {
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({
      ...s,
      branding: { ...s.branding, name: '</script><script>alert(1)</script>' },
    });
    const res = await t.app.inject({ method: 'GET', url: '/login' });
    expect(res.body).not.toContain('<script>alert(1)');
    expect(res.body).toContain('<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>');
    expect(startupOf(res.body).Name).toBe('</script><script>alert(1)</script>');
  });

  it('serves hashed assets with a long cache, others with a day', async () => {
    const asset = await t.app.inject({ method: 'GET', url: '/static/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const logo = await t.app.inject({ method: 'GET', url: '/static/img/logo.svg' });
    expect(logo.statusCode).toBe(200);
    expect(logo.headers['cache-control']).toBe('public, max-age=86400');
    expect((await t.app.inject({ method: 'GET', url: '/static/missing.js' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/static/img/' })).statusCode).toBe(404);
  });

  it('serves branding files in place of the built ones, and nothing outside them', async () => {
    const branding = path.join(t.outside, 'branding');
    await fs.mkdir(path.join(branding, 'img'), { recursive: true });
    await fs.writeFile(path.join(branding, 'img', 'logo.svg'), '<svg id="custom"/>');
    await fs.writeFile(path.join(branding, 'custom.css'), 'body{color:red}');
    await fs.writeFile(path.join(t.outside, 'secret.txt'), 'secret');
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...s, branding: { ...s.branding, files: branding } });
    expect((await t.app.inject({ method: 'GET', url: '/static/img/logo.svg' })).body).toBe(
      '<svg id="custom"/>',
    );
    expect((await t.app.inject({ method: 'GET', url: '/static/custom.css' })).body).toBe('body{color:red}');
    const page = await t.app.inject({ method: 'GET', url: '/' });
    expect(page.body).toContain('href="/static/custom.css"');
    expect(startupOf(page.body).CSS).toBe(true);
    const escape = await rawGet(t, '/static/img/../../secret.txt');
    expect(escape.status).toBe(301);
    expect(escape.body).not.toContain('secret');
  });

  it('redirects unclean paths and answers 404 for unknown API routes and non-GET pages', async () => {
    const dotted = await rawGet(t, '/files/a/%2e%2e/b');
    expect(dotted.status).toBe(301);
    expect(dotted.location).toBe('/files/b');
    const doubled = await t.app.inject({ method: 'GET', url: '/files//x?y=1' });
    expect(doubled.statusCode).toBe(301);
    expect(doubled.headers.location).toBe('/files/x?y=1');
    const api = await t.app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(api.statusCode).toBe(404);
    expect(api.body).toBe('404 Not Found\n');
    const post = await t.app.inject({ method: 'POST', url: '/files/x' });
    expect(post.statusCode).toBe(404);
  });
});

describe('methods, policies and branding', () => {
  beforeEach(() => withWeb());

  it('answers 405 with Allow for a known path asked with a method it does not take', async () => {
    const cases: [string, string, string][] = [
      ['DELETE', '/api/settings', 'GET, HEAD, PUT'],
      ['POST', '/api/settings', 'GET, HEAD, PUT'],
      ['PATCH', '/api/users/1', 'DELETE, GET, HEAD, PUT'],
      ['DELETE', '/api/users', 'GET, HEAD, POST'],
      ['GET', '/api/logout', 'POST'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await t.request(t.adminToken, { method: method as 'GET', url });
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.body).toBe('');
    }
    // Nothing changed hands: the settings are still there and the session still works.
    expect((await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).statusCode).toBe(200);
    // Static files and unknown paths stay 404 for other methods (contract 14 and 1.1).
    expect((await t.app.inject({ method: 'PUT', url: '/static/img/logo.svg' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: '/api/nothing-here' })).statusCode).toBe(404);
  });

  it('sends a Content-Security-Policy with every kind of answer', async () => {
    const answers = [
      await t.app.inject({ method: 'GET', url: '/' }),
      await t.app.inject({ method: 'GET', url: '/login' }),
      await t.app.inject({ method: 'GET', url: '/health' }),
      await t.app.inject({ method: 'GET', url: '/static/img/logo.svg' }),
      await t.app.inject({ method: 'GET', url: '/static/assets/index-abc123.js' }),
      await t.app.inject({ method: 'GET', url: '/static/missing.css' }),
      await t.app.inject({ method: 'GET', url: '/api/users' }),
      await t.request(t.adminToken, { method: 'GET', url: '/api/users' }),
      await t.app.inject({ method: 'POST', url: '/api/login', payload: {} }),
      await t.app.inject({ method: 'DELETE', url: '/api/settings' }),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200, 404, 401, 200, 403, 405]);
    for (const answer of answers) {
      const csp = String(answer.headers['content-security-policy'] ?? '');
      expect(csp).toMatch(/^default-src 'self'/);
      expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('allows the captcha host in the page policy and tells the page about it', async () => {
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({
      ...s,
      auther: { ...s.auther, recaptcha: { host: 'https://recaptcha.example', key: 'site-key', secret: 's' } },
    });
    const page = await t.app.inject({ method: 'GET', url: '/login' });
    expect(startupOf(page.body)).toMatchObject({
      ReCaptcha: true,
      ReCaptchaHost: 'https://recaptcha.example',
      ReCaptchaKey: 'site-key',
    });
    expect(page.headers['content-security-policy']).toMatch(
      /script-src 'nonce-[^']+' 'strict-dynamic' https:\/\/recaptcha\.example/,
    );
    expect(page.body).not.toContain('"s"');
  });

  it('reads a branding folder given as a relative path', async () => {
    const branding = path.join(t.outside, 'relative-branding');
    await fs.mkdir(path.join(branding, 'img'), { recursive: true });
    await fs.writeFile(path.join(branding, 'img', 'logo.svg'), '<svg id="relative"/>');
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({
      ...s,
      branding: { ...s.branding, files: path.relative(process.cwd(), branding) },
    });
    const logo = await t.app.inject({ method: 'GET', url: '/static/img/logo.svg' });
    expect(logo.body).toBe('<svg id="relative"/>');
    expect(logo.headers['cache-control']).toBe('public, max-age=86400');
    // A folder of that name in the branding files does not hide the built file.
    await fs.mkdir(path.join(branding, 'img', 'dir.svg'));
    expect((await t.app.inject({ method: 'GET', url: '/static/img/dir.svg' })).statusCode).toBe(404);
  });
});

describe('base URL', () => {
  beforeEach(() => withWeb({ baseURL: '/fb' }));

  it('serves everything with or without the prefix and redirects the bare prefix', async () => {
    const bare = await t.app.inject({ method: 'GET', url: '/fb' });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/fb/');
    const page = await t.app.inject({ method: 'GET', url: '/fb/files/' });
    expect(page.statusCode).toBe(200);
    expect(startupOf(page.body)).toMatchObject({ BaseURL: '/fb', StaticURL: '/fb/static' });
    expect(page.body).toContain('src="/fb/static/assets/index-abc123.js"');
    expect((await t.app.inject({ method: 'GET', url: '/fb/health' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const login = await t.app.inject({
      method: 'POST',
      url: '/fb/api/login',
      payload: { username: 'x', password: 'y' },
    });
    expect(login.statusCode).toBe(403);
  });
});

describe('without a built web app', () => {
  beforeEach(async () => {
    t = await startTestApp();
  });
  it('explains how to build it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
  });
});
