import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, login, newPage, screenshot } from '../support/browser';
import { ADMIN, startServer, type RunningServer } from '../support/server';

describe('smoke: the built app signs in and lists the root folder', () => {
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('signs in as the administrator and lands on /files/', async () => {
    const { context, page } = await newPage(browser);
    await login(page, server.url, ADMIN.username, ADMIN.password);
    expect(new URL(page.url()).pathname).toBe('/files/');
    await expect(page.title()).resolves.toMatch(/File Browser/);
    // The served root is empty: the listing says so once it has loaded.
    await page.getByText('It feels lonely here...').waitFor();
    await screenshot(page, 'smoke-files');
    await context.close();
  });
});
