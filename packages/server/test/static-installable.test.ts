import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.js';

/** The icons the built app ships in dist/img/icons (packages/web/public/img/icons). */
const ICONS = [
  'android-chrome-192x192.png',
  'android-chrome-512x512.png',
  'maskable-512x512.png',
  'apple-touch-icon.png',
  'favicon.ico',
];
const shipped = (name: string) => path.join(import.meta.dirname, '../../web/public/img/icons', name);

let t: TestApp;
async function withWeb(overrides = {}) {
  t = await startTestApp(overrides);
  const dist = t.ctx.config.webDist;
  await fs.mkdir(path.join(dist, 'img', 'icons'), { recursive: true });
  await fs.writeFile(
    path.join(dist, 'index.html'),
    '<!doctype html><html><head><title>File Browser</title><meta name="theme-color" content="#2979ff"><!-- FB_STARTUP --></head><body></body></html>',
  );
  for (const name of ICONS) await fs.copyFile(shipped(name), path.join(dist, 'img', 'icons', name));
}
afterEach(async () => {
  await t.close();
});

async function brandingFolder(files: Record<string, string>) {
  const folder = path.join(t.outside, 'branding');
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(folder, rel)), { recursive: true });
    await fs.writeFile(path.join(folder, rel), content);
  }
  const s = t.ctx.store.settings.get();
  await t.ctx.store.settings.save({ ...s, branding: { ...s.branding, files: folder } });
}

const manifest = async (url = '/manifest.json') => {
  const res = await t.app.inject({ method: 'GET', url });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/manifest+json; charset=utf-8');
  return res.json() as Record<string, unknown> & { icons: { src: string; sizes: string; purpose: string }[] };
};

describe('the shipped icons', () => {
  it('are PNGs of the sizes the manifest names, and a real .ico', async () => {
    await withWeb();
    const sharp = (await import('sharp')).default;
    const sizes: Record<string, number> = {
      'android-chrome-192x192.png': 192,
      'android-chrome-512x512.png': 512,
      'maskable-512x512.png': 512,
      'apple-touch-icon.png': 180,
    };
    for (const [name, size] of Object.entries(sizes)) {
      const meta = await sharp(shipped(name)).metadata();
      expect([meta.format, meta.width, meta.height], name).toEqual(['png', size, size]);
    }
    // ICONDIR: reserved 0, type 1 (icon), then at least one image.
    const ico = await fs.readFile(shipped('favicon.ico'));
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2)]).toEqual([0, 1]);
    expect(ico.readUInt16LE(4)).toBeGreaterThan(0);
  });
});

describe('/manifest.json', () => {
  it('answers the manifest itself, not the page, with the default name, colour and every icon', async () => {
    await withWeb();
    const body = await manifest();
    expect(body).toEqual({
      id: '/',
      name: 'File Browser',
      short_name: 'File Browser',
      start_url: '/',
      scope: '/',
      display: 'standalone',
      background_color: '#ffffff',
      theme_color: '#2979ff',
      icons: [
        {
          src: '/static/img/icons/android-chrome-192x192.png',
          sizes: '192x192',
          type: 'image/png',
          purpose: 'any',
        },
        {
          src: '/static/img/icons/android-chrome-512x512.png',
          sizes: '512x512',
          type: 'image/png',
          purpose: 'any',
        },
        {
          src: '/static/img/icons/maskable-512x512.png',
          sizes: '512x512',
          type: 'image/png',
          purpose: 'maskable',
        },
      ],
    });
    for (const icon of body.icons) {
      const res = await t.app.inject({ method: 'GET', url: icon.src });
      expect(res.statusCode, icon.src).toBe(200);
      expect(res.headers['content-type'], icon.src).toBe('image/png');
    }
    const head = await t.app.inject({ method: 'HEAD', url: '/manifest.json' });
    expect(head.statusCode).toBe(200);
  });

  it('takes the name and theme colour from the branding settings', async () => {
    await withWeb();
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({
      ...s,
      branding: { ...s.branding, name: 'Family "files"', color: 'teal' },
    });
    expect(await manifest()).toMatchObject({
      name: 'Family "files"',
      short_name: 'Family "files"',
      theme_color: 'teal',
    });
  });

  it('falls back to the default colour for one the page could not use', async () => {
    await withWeb();
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...s, branding: { ...s.branding, color: 'rgb(1, 2, 3)' } });
    expect((await manifest()).theme_color).toBe('#2979ff');
  });

  it('puts start URL, scope and icons under the base URL', async () => {
    await withWeb({ baseURL: '/fb' });
    const body = await manifest('/fb/manifest.json');
    expect(body).toMatchObject({ id: '/fb/', start_url: '/fb/', scope: '/fb/' });
    expect(body.icons.map((icon) => icon.src)).toEqual([
      '/fb/static/img/icons/android-chrome-192x192.png',
      '/fb/static/img/icons/android-chrome-512x512.png',
      '/fb/static/img/icons/maskable-512x512.png',
    ]);
    for (const icon of body.icons) {
      expect((await t.app.inject({ method: 'GET', url: icon.src })).statusCode, icon.src).toBe(200);
    }
    const page = await t.app.inject({ method: 'GET', url: '/fb/files/' });
    expect(page.body).toContain('<link rel="manifest" href="/fb/manifest.json">');
  });

  it("uses a branding folder's own icons, and leaves out the maskable one it lacks", async () => {
    await withWeb();
    await brandingFolder({ 'img/icons/android-chrome-192x192.png': 'branded' });
    const body = await manifest();
    expect(body.icons.map((icon) => icon.purpose)).toEqual(['any', 'any']);
    const branded = await t.app.inject({
      method: 'GET',
      url: '/static/img/icons/android-chrome-192x192.png',
    });
    expect(branded.body).toBe('branded');
    // Not in the folder: the built one, as for every other static file.
    const built = await t.app.inject({ method: 'GET', url: '/static/img/icons/android-chrome-512x512.png' });
    expect(built.rawPayload).toEqual(await fs.readFile(shipped('android-chrome-512x512.png')));
  });

  it('lists the maskable icon of a branding folder that has one', async () => {
    await withWeb();
    await brandingFolder({ 'img/icons/maskable-512x512.png': 'branded maskable' });
    expect((await manifest()).icons.map((icon) => icon.purpose)).toEqual(['any', 'any', 'maskable']);
  });

  it('keeps every icon when the branding folder has only a logo', async () => {
    await withWeb();
    await brandingFolder({ 'img/logo.svg': '<svg/>' });
    expect((await manifest()).icons).toHaveLength(3);
  });

  it('answers another method with 405', async () => {
    await withWeb();
    const res = await t.app.inject({ method: 'POST', url: '/manifest.json' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toContain('GET');
  });
});

describe('/favicon.ico', () => {
  it('is the shipped icon file, at the root and under the base URL', async () => {
    await withWeb({ baseURL: '/fb' });
    for (const url of ['/favicon.ico', '/fb/favicon.ico']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^image\/(x-icon|vnd\.microsoft\.icon)$/);
      expect(res.rawPayload).toEqual(await fs.readFile(shipped('favicon.ico')));
    }
  });

  it("is the branding folder's favicon when it has one, served as an inert file", async () => {
    await withWeb();
    await brandingFolder({ 'img/icons/favicon.ico': 'branded icon' });
    const res = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('branded icon');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});
