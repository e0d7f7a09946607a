import fs from 'node:fs/promises';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FILE_CSP } from '../src/http/file-safety.js';
import { startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * Active content: no byte a user (or the branding folder) put in a file can run
 * as script or style in the app's origin. Every endpoint that sends file bytes is asked for every
 * hostile type, inline and as an attachment; the page's own CSP must refuse /api/ as a script
 * source whatever the API answers.
 */

const SCRIPT = 'localStorage.setItem("pwned", "1")';

/** Name → bytes. Each would run script (or restyle the app) if served with its natural type. */
const HOSTILE: Record<string, string> = {
  'evil.js': SCRIPT,
  'evil.mjs': `export default 1; ${SCRIPT}`,
  'evil.css': 'body { background: url(/api/raw/steal) }',
  'evil.html': `<!doctype html><html><body><script>${SCRIPT}</script></body></html>`,
  'evil.htm': `<html><script>${SCRIPT}</script></html>`,
  'evil.svg': `<svg xmlns="http://www.w3.org/2000/svg"><script href="/api/public/dl/x/evil.js"/><script>${SCRIPT}</script></svg>`,
  'evil.xml': `<?xml version="1.0"?><x:script xmlns:x="http://www.w3.org/1999/xhtml">${SCRIPT}</x:script>`,
  'evil.xhtml': `<html xmlns="http://www.w3.org/1999/xhtml"><script>${SCRIPT}</script></html>`,
  // No extension: the type is sniffed from the bytes, and HTML must not come out of it.
  'no-extension': `<html><script>${SCRIPT}</script></html>`,
};

/** What each is labelled with when asked inline: only SVG keeps its type, under the sandbox. */
const INLINE_TYPE = (name: string) => (name.endsWith('.svg') ? 'image/svg+xml' : 'text/plain; charset=utf-8');

let t: FilesApp;
let bob: string;
let home: string;

beforeEach(async () => {
  t = await startFilesApp();
  bob = await t.user('bob');
  home = path.join(t.root, 'bob');
  await fs.mkdir(path.join(home, 'www'), { recursive: true });
  for (const [name, body] of Object.entries(HOSTILE)) await fs.writeFile(path.join(home, 'www', name), body);
  await fs.writeFile(path.join(home, 'www', 'clip.mp4'), 'not really a video');
  await fs.writeFile(path.join(home, 'www', 'paper.pdf'), '%PDF-1.1\n%%EOF\n');
  await fs.writeFile(
    path.join(home, 'www', 'evil.vtt'),
    `WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<script>x</script>\n`,
  );
});
afterEach(async () => {
  await t.close();
});

/** The three headers of file bytes, and the file policy as the whole policy (not added to another). */
function expectInert(res: LightMyRequestResponse, what: string) {
  expect(res.headers['content-security-policy'], what).toBe(FILE_CSP);
  expect(res.headers['x-content-type-options'], what).toBe('nosniff');
  expect(res.headers['cross-origin-resource-policy'], what).toBe('same-origin');
}

async function share(p: string): Promise<string> {
  const res = await t.req(bob, { method: 'POST', url: `/api/share${p}`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().hash;
}

const pub = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers });

describe('file bytes under /api/ are inert', () => {
  it('GET /api/raw: every hostile type, inline and attached, whole, ranged and revalidated', async () => {
    for (const name of Object.keys(HOSTILE)) {
      const inline = await t.get(bob, `/api/raw/www/${name}?inline=true`);
      expect(inline.statusCode, name).toBe(200);
      expect(inline.headers['content-type'], name).toBe(INLINE_TYPE(name));
      expect(inline.body, name).toBe(HOSTILE[name]);
      expectInert(inline, `raw inline ${name}`);

      const attached = await t.get(bob, `/api/raw/www/${name}`);
      expect(attached.headers['content-type'], name).toBe('application/octet-stream');
      expectInert(attached, `raw attachment ${name}`);

      const ranged = await t.get(bob, `/api/raw/www/${name}?inline=true`, { range: 'bytes=0-3' });
      expect(ranged.statusCode, name).toBe(206);
      expect(ranged.headers['content-type'], name).toBe(INLINE_TYPE(name));
      expectInert(ranged, `raw range ${name}`);

      const parts = await t.get(bob, `/api/raw/www/${name}?inline=true`, { range: 'bytes=0-1,3-4' });
      expect(parts.statusCode, name).toBe(206);
      expect(parts.body, name).toContain(`Content-Type: ${INLINE_TYPE(name)}\r\n`);
      expectInert(parts, `raw multipart ${name}`);

      const etag = String(inline.headers.etag);
      const fresh = await t.get(bob, `/api/raw/www/${name}?inline=true`, { 'if-none-match': etag });
      expect(fresh.statusCode, name).toBe(304);
      expectInert(fresh, `raw 304 ${name}`);
    }
  });

  it('GET /api/public/dl: a shared folder, a shared file, and the folder as an archive', async () => {
    const folder = await share('/www');
    for (const name of Object.keys(HOSTILE)) {
      const inline = await pub(`/api/public/dl/${folder}/${name}?inline=true`);
      expect(inline.statusCode, name).toBe(200);
      expect(inline.headers['content-type'], name).toBe(INLINE_TYPE(name));
      expectInert(inline, `public inline ${name}`);
      const attached = await pub(`/api/public/dl/${folder}/${name}`);
      expect(attached.headers['content-type'], name).toBe('application/octet-stream');
      expectInert(attached, `public attachment ${name}`);
    }
    // The exact request of the advisory: a shared script asked inline, as an SVG's <script href>.
    const single = await share('/www/evil.js');
    const script = await pub(`/api/public/dl/${single}?inline=true`);
    expect(script.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(script.headers['content-type']).not.toMatch(/javascript/);
    expectInert(script, 'shared file');

    const archive = await pub(`/api/public/dl/${folder}?algo=zip`);
    expect(archive.statusCode).toBe(200);
    expect(archive.headers['content-type']).toBe('application/zip');
    expectInert(archive, 'public archive');
  });

  it('GET /api/raw of a folder and of a files= list: archives', async () => {
    const folder = await t.get(bob, '/api/raw/www?algo=zip');
    expect(folder.statusCode).toBe(200);
    expectInert(folder, 'raw folder archive');
    const list = await t.get(bob, '/api/raw/www?files=evil.html,evil.svg&algo=tar');
    expect(list.statusCode).toBe(200);
    expectInert(list, 'raw files= archive');
  });

  it('GET /api/preview: an SVG is served as it is, sandboxed; other hostile types are not previews', async () => {
    for (const size of ['thumb', 'big']) {
      const svg = await t.get(bob, `/api/preview/${size}/www/evil.svg?inline=true`);
      expect(svg.statusCode).toBe(200);
      expect(svg.headers['content-type']).toBe('image/svg+xml');
      expectInert(svg, `preview ${size} svg`);
      for (const name of Object.keys(HOSTILE).filter((n) => !n.endsWith('.svg'))) {
        const res = await t.get(bob, `/api/preview/${size}/www/${name}?inline=true`);
        // Not an image: nothing is served at all, so there is no type to get wrong.
        expect(res.statusCode, `${size} ${name}`).toBe(501);
        expect(res.body).not.toContain('script');
      }
    }
  });

  it('GET /api/subtitle: always text/vtt, inert; hostile types are refused', async () => {
    const vtt = await t.get(bob, '/api/subtitle/www/evil.vtt?inline=true');
    expect(vtt.statusCode).toBe(200);
    expect(vtt.headers['content-type']).toBe('text/vtt; charset=utf-8');
    expectInert(vtt, 'subtitle');
    for (const name of Object.keys(HOSTILE)) {
      const res = await t.get(bob, `/api/subtitle/www/${name}?inline=true`);
      expect(res.statusCode, name).toBe(400);
      expect(res.headers['content-type'], name).toBe('text/plain; charset=utf-8');
    }
  });

  it('GET /api/resources with X-Encoding: raw text bytes, inert', async () => {
    for (const name of ['evil.js', 'evil.html', 'evil.css', 'evil.xml']) {
      const res = await t.get(bob, `/api/resources/www/${name}`, { 'x-encoding': 'true' });
      expect(res.statusCode, name).toBe(200);
      expect(res.headers['content-type'], name).toBe('application/octet-stream');
      expect(res.body, name).toBe(HOSTILE[name]);
      expectInert(res, `resources x-encoding ${name}`);
    }
  });

  it('audio and video keep their origin so the browser’s own player can fetch them; nothing else does', async () => {
    const clip = await t.get(bob, '/api/raw/www/clip.mp4?inline=true');
    expect(clip.headers['content-type']).toBe('video/mp4');
    expect(clip.headers['content-security-policy']).toBe(
      FILE_CSP.replace('sandbox;', 'sandbox allow-same-origin;'),
    );
    // Still no script, whatever origin the document has.
    expect(clip.headers['content-security-policy']).toContain("script-src 'none'");
    expect(clip.headers['content-security-policy']).not.toMatch(/allow-scripts/);
    expect(clip.headers['cross-origin-resource-policy']).toBe('same-origin');
    // An attachment of the same file is octet-stream, so it is fully sandboxed.
    expectInert(await t.get(bob, '/api/raw/www/clip.mp4'), 'video attachment');
    // A PDF renders in Chromium's viewer under the full sandbox (checked with /usr/bin/chromium).
    const pdf = await t.get(bob, '/api/raw/www/paper.pdf?inline=true');
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expectInert(pdf, 'pdf');
  });
});

const INDEX = `<!doctype html><html><head><meta charset="utf-8"><title>File Browser</title>
<meta name="theme-color" content="#2979ff"><!-- FB_STARTUP -->
<script type="module" crossorigin src="./assets/index-abc123.js"></script></head><body></body></html>`;

/** The directives of a policy, by name. */
function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

describe('the page', () => {
  beforeEach(async () => {
    await fs.mkdir(path.join(t.ctx.config.webDist, 'assets'), { recursive: true });
    await fs.writeFile(path.join(t.ctx.config.webDist, 'index.html'), INDEX);
  });

  /** The nonce a page's policy allows, checked to be the only way a script runs there. */
  function scriptPolicy(page: { headers: Record<string, unknown>; body: string }): string {
    const csp = directives(String(page.headers['content-security-policy']));
    const sources = csp.get('script-src')!;
    expect(sources).toHaveLength(2);
    expect(sources[1]).toBe("'strict-dynamic'");
    const nonce = /^'nonce-([A-Za-z0-9+/]{22}==)'$/.exec(sources[0]!)?.[1];
    expect(nonce, sources[0]).toBeDefined();
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'self'"]);
    return nonce!;
  }

  it('runs only the scripts the page names with its nonce: no /api/ URL, no inline script, no plugins, no <base>', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/files/' });
    expect(page.statusCode).toBe(200);
    const nonce = scriptPolicy(page);
    // The built module carries the nonce; nothing else in the page does, and no source is a
    // place (no 'self', no host, no /api/) that a download could be loaded from.
    expect(page.body).toContain(
      `<script nonce="${nonce}" type="module" crossorigin src="/static/assets/index-abc123.js">`,
    );
    expect(page.body.split(nonce)).toHaveLength(3); // the module, and the tag its preloader reads
    expect(page.body).toContain(`<meta property="csp-nonce" nonce="${nonce}">`);
    const raw = String(page.headers['content-security-policy']);
    expect(raw).not.toMatch(/script-src[^;]*('self'|unsafe|\*|https?:|\/api\/)/);
    // A fresh nonce for every page.
    const again = await t.app.inject({ method: 'GET', url: '/files/' });
    expect(scriptPolicy(again)).not.toBe(nonce);
  });

  it('works the same behind a proxy that rewrites Host, and under a base URL', async () => {
    await t.close();
    t = await startFilesApp({ baseURL: '/fb' });
    await fs.mkdir(path.join(t.ctx.config.webDist, 'assets'), { recursive: true });
    await fs.writeFile(path.join(t.ctx.config.webDist, 'index.html'), INDEX);
    for (const host of ['files.example', '127.0.0.1:8080', '[::1]:8080']) {
      const page = await t.app.inject({ method: 'GET', url: '/fb/files/', headers: { host } });
      const nonce = scriptPolicy(page);
      expect(page.body, host).toContain(
        `<script nonce="${nonce}" type="module" crossorigin src="/fb/static/assets/index-abc123.js">`,
      );
    }
  });

  it('never lets a Host header write its own directives', async () => {
    for (const host of ["evil.example; script-src 'unsafe-inline'", 'a b', '[::1]:8080', 'x,y']) {
      const page = await t.app.inject({ method: 'GET', url: '/', headers: { host } });
      const raw = String(page.headers['content-security-policy']);
      expect(raw, host).not.toContain("unsafe-inline'; script");
      expect(raw, host).not.toContain('evil.example');
      scriptPolicy(page);
    }
  });
});

describe('the branding folder', () => {
  let branding: string;
  beforeEach(async () => {
    branding = path.join(t.outside, 'branding');
    await fs.mkdir(path.join(branding, 'img'), { recursive: true });
    for (const [name, body] of Object.entries(HOSTILE))
      await fs.writeFile(path.join(branding, 'img', name), body);
    await fs.writeFile(path.join(branding, 'custom.css'), 'body { color: red }');
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...s, branding: { ...s.branding, files: branding } });
  });

  it('serves logos and other img/ files as downloads are served: SVG sandboxed, scripts as text', async () => {
    for (const name of Object.keys(HOSTILE)) {
      const res = await t.app.inject({ method: 'GET', url: `/static/img/${name}` });
      expect(res.statusCode, name).toBe(200);
      expect(res.body, name).toBe(HOSTILE[name]);
      expect(res.headers['content-type'], name).toBe(
        name.endsWith('.svg')
          ? 'image/svg+xml'
          : name === 'no-extension'
            ? 'application/octet-stream'
            : 'text/plain; charset=utf-8',
      );
      expectInert(res, `branding ${name}`);
    }
  });

  it('keeps custom.css a stylesheet of the page, with the same headers', async () => {
    const css = await t.app.inject({ method: 'GET', url: '/static/custom.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body).toBe('body { color: red }');
    expectInert(css, 'custom.css');
    // Revalidation answers carry them too.
    const again = await t.app.inject({
      method: 'GET',
      url: '/static/img/evil.svg',
      headers: {
        'if-none-match': String(
          (await t.app.inject({ method: 'GET', url: '/static/img/evil.svg' })).headers.etag,
        ),
      },
    });
    expect(again.statusCode).toBe(304);
    expect(again.headers['content-security-policy']).toBe(FILE_CSP);
  });
});
