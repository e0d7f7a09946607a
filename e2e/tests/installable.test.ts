import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchWithProfile } from '../support/browser';
import { startServer, type RunningServer } from '../support/server';

interface InstallabilityError {
  errorId: string;
  errorArguments: { name: string; value: string }[];
}

/** What Chromium itself says stands between this page and "Install app". */
async function installabilityErrors(page: Page): Promise<InstallabilityError[]> {
  const cdp = await page.context().newCDPSession(page);
  const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as {
    installabilityErrors: InstallabilityError[];
  };
  await cdp.detach();
  return installabilityErrors;
}

async function appManifest(page: Page): Promise<{ url: string; errors: unknown[]; data?: string }> {
  const cdp = await page.context().newCDPSession(page);
  const manifest = (await cdp.send('Page.getAppManifest')) as {
    url: string;
    errors: unknown[];
    data?: string;
  };
  await cdp.detach();
  return manifest;
}

describe('installable: Chromium offers to install the app', () => {
  let browser: BrowserContext;
  let profile: string;
  const servers: RunningServer[] = [];

  beforeAll(async () => {
    profile = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-e2e-profile-'));
    browser = await launchWithProfile(profile);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all(servers.map((server) => server.stop()));
    await fs.rm(profile, { recursive: true, force: true });
  });

  for (const baseURL of ['', '/fb']) {
    it(`reports no installability error${baseURL ? ` under the base URL ${baseURL}` : ''}`, async () => {
      const server = await startServer({ baseURL });
      servers.push(server);
      const s = server.ctx.store.settings.get();
      await server.ctx.store.settings.save({
        ...s,
        branding: { ...s.branding, name: 'Team files', color: '#00796b' },
      });
      const page = await browser.newPage();
      // 127.0.0.1 is a secure context for the browser, as HTTPS would be.
      await page.goto(`${server.url}${baseURL}/login`);
      await page.getByRole('button', { name: /^(login|log in|sign in)$/i }).waitFor();

      const manifest = await appManifest(page);
      expect(manifest.url).toBe(`${server.url}${baseURL}/manifest.json`);
      expect(manifest.errors).toEqual([]);
      expect(JSON.parse(manifest.data ?? '{}')).toMatchObject({
        name: 'Team files',
        theme_color: '#00796b',
        start_url: `${baseURL}/`,
      });
      expect(await installabilityErrors(page)).toEqual([]);

      // The icons the page names answer, as does the favicon browsers ask for on their own.
      for (const selector of ['link[rel="apple-touch-icon"]', 'link[rel="icon"][sizes]']) {
        const href = await page.locator(selector).getAttribute('href');
        const res = await page.request.get(new URL(href!, page.url()).href);
        expect(res.status(), selector).toBe(200);
        expect(res.headers()['content-type'], selector).toMatch(/^image\//);
      }
      const favicon = await page.request.get(`${server.url}${baseURL}/favicon.ico`);
      expect(favicon.status()).toBe(200);
      await page.close();
    });
  }

  it('is not installable without its manifest (the check above is a real one)', async () => {
    const server = await startServer();
    servers.push(server);
    const page = await browser.newPage();
    await page.route('**/manifest.json', (route) => route.fulfill({ status: 404, body: '' }));
    await page.goto(`${server.url}/login`);
    await page.getByRole('button', { name: /^(login|log in|sign in)$/i }).waitFor();
    expect((await installabilityErrors(page)).map((error) => error.errorId)).not.toEqual([]);
    await page.close();
  });
});
