import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TOKEN_STORAGE_KEY } from '@filebrowser/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, login, newPage } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

/**
 * A stored script attack replayed in a real browser: an SVG in the branding folder loads a script
 * from a public share download, which reads the administrator's token. The script marks every
 * place it could reach, so "never ran" is a fact about the browser, not about headers.
 */

const STEAL =
  `try { localStorage.setItem('stolen', localStorage.getItem('${TOKEN_STORAGE_KEY}') || 'ran'); } catch (e) {}\n` +
  "try { window.top.document.title = 'stolen'; } catch (e) {}\n";

/** One page saying "Hello PDF". */
const PDF = `%PDF-1.1
1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj
2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj
3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj
4 0 obj<</Length 44>>stream
BT /F1 18 Tf 20 60 Td (Hello PDF) Tj ET
endstream endobj
5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj
trailer<</Root 1 0 R>>
%%EOF
`;

/** One second of an 8 kHz, 8-bit mono tone. */
function wav(): Buffer {
  const samples = 8000;
  const b = Buffer.alloc(44 + samples);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + samples, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(8000, 28);
  b.writeUInt16LE(1, 32);
  b.writeUInt16LE(8, 34);
  b.write('data', 36);
  b.writeUInt32LE(samples, 40);
  for (let i = 0; i < samples; i++) b[44 + i] = 128 + Math.round(60 * Math.sin(i / 3));
  return b;
}

let server: RunningServer;
let browser: Browser;
let branding: string;
let scriptURL: string;
let htmlURL: string;

async function api(method: string, url: string, token?: string): Promise<Response> {
  return fetch(`${server.url}${url}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token && { 'X-Auth': token }) },
    body: method === 'POST' ? JSON.stringify(token ? {} : ADMIN) : undefined,
  });
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await fs.writeFile(path.join(server.root, 'steal.js'), STEAL);
  await fs.writeFile(path.join(server.root, 'paper.pdf'), PDF);
  await fs.writeFile(path.join(server.root, 'tone.wav'), wav());
  await fs.writeFile(
    path.join(server.root, 'steal.html'),
    `<html><body><script>${STEAL}</script></body></html>`,
  );
  const token = await (await api('POST', '/api/login')).text();
  const shareOf = async (p: string) => (await (await api('POST', `/api/share${p}`, token)).json()).hash;
  scriptURL = `/api/public/dl/${await shareOf('/steal.js')}?inline=true`;
  htmlURL = `/api/public/dl/${await shareOf('/steal.html')}?inline=true`;

  branding = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-e2e-branding-'));
  await fs.mkdir(path.join(branding, 'img'));
  await fs.writeFile(
    path.join(branding, 'img', 'evil.svg'),
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">` +
      `<script href="${scriptURL}"/><script xlink:href="${scriptURL}"/>` +
      `<script>${STEAL.replace(/</g, '&lt;')}</script><rect width="10" height="10"/></svg>`,
  );
  const s = server.ctx.store.settings.get();
  await server.ctx.store.settings.save({ ...s, branding: { ...s.branding, files: branding } });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (branding) await fs.rm(branding, { recursive: true, force: true });
});

/** What the script would have left in the app's origin. */
const stolen = (page: Page) => page.evaluate(() => localStorage.getItem('stolen'));

describe('active content in a real browser', () => {
  it('a branding SVG that loads a shared script runs nothing, and the admin token stays put', async () => {
    const { context, page } = await newPage(browser);
    await login(page, server.url, ADMIN.username, ADMIN.password);
    expect(await page.evaluate((key) => localStorage.getItem(key), TOKEN_STORAGE_KEY)).toBeTruthy();

    const blocked: string[] = [];
    page.on('console', (m) => blocked.push(m.text()));
    // goto waits for the load event, which an SVG's scripts (inline and external) come before.
    const svg = await page.goto(`${server.url}/static/img/evil.svg`);
    await page.goto(`${server.url}/files/`);
    expect(await stolen(page)).toBeNull();
    // The browser says why: the sandboxed document may not run script at all.
    expect(svg?.headers()['content-security-policy']).toMatch(/^sandbox;/);
    expect(blocked.join('\n')).toMatch(/sandboxed|Content Security Policy/);
    await context.close();
  });

  it('the app page refuses a share download as a script or a stylesheet', async () => {
    const { context, page } = await newPage(browser);
    await login(page, server.url, ADMIN.username, ADMIN.password);
    // As if markup had been injected into the page: each element reports load or error.
    const outcome = await page.evaluate(
      ([src]) =>
        Promise.all(
          ['classic', 'module', 'style'].map(
            (kind) =>
              new Promise<string>((resolve) => {
                const el =
                  kind === 'style'
                    ? Object.assign(document.createElement('link'), { rel: 'stylesheet', href: src })
                    : Object.assign(document.createElement('script'), {
                        src,
                        type: kind === 'module' ? 'module' : 'text/javascript',
                      });
                el.addEventListener('load', () => resolve(`${kind}: loaded`));
                el.addEventListener('error', () => resolve(`${kind}: refused`));
                document.head.append(el);
              }),
          ),
        ),
      [scriptURL],
    );
    expect(outcome).toEqual(['classic: refused', 'module: refused', 'style: refused']);
    expect(await stolen(page)).toBeNull();
    expect(await page.title()).not.toBe('stolen');
    await context.close();
  });

  it('a shared HTML page opened inline is shown as text and runs nothing', async () => {
    const { context, page } = await newPage(browser);
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}${htmlURL}`);
    expect(await page.evaluate(() => document.contentType)).toBe('text/plain');
    expect(await page.title()).not.toBe('stolen');
    await page.goto(`${server.url}/files/`);
    expect(await stolen(page)).toBeNull();
    await context.close();
  });

  // The sandbox must not cost what it protects: these are the trade-offs docs/api.md describes.
  it('the preview still shows a PDF in Chromium’s viewer under the sandbox', async () => {
    const { context, page } = await newPage(browser);
    await login(page, server.url, ADMIN.username, ADMIN.password);
    const viewer = page.waitForEvent('framenavigated', (f) => f.url().startsWith('chrome-extension://'));
    await page.goto(`${server.url}/files/paper.pdf`);
    await page.locator('iframe.preview__frame').waitFor();
    expect((await viewer).url()).toMatch(/^chrome-extension:\/\/[a-z]+\/index\.html/);
    await context.close();
  });

  it('audio plays in the preview and in a tab of its own', async () => {
    const { context, page } = await newPage(browser);
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}/files/tone.wav`);
    await page.waitForFunction(() => (document.querySelector('audio')?.readyState ?? 0) >= 1);
    // "Open the original": the browser's media document fetches the file again as a CORS request.
    const own = await page.goto(`${server.url}/api/raw/tone.wav?inline=true`);
    expect(own?.headers()['content-security-policy']).toMatch(/^sandbox allow-same-origin;/);
    await page.waitForFunction(() => (document.querySelector('video')?.readyState ?? 0) >= 1);
    expect(await page.evaluate(() => document.querySelector('video')?.duration)).toBe(1);
    await context.close();
  });
});
