import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, login, newPage, screenshot } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await fs.writeFile(path.join(server.root, 'one.bin'), Buffer.alloc(1024 * 1024));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('quota', () => {
  it('an admin sets a quota in the user form, and the sidebar then shows used of quota', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      // Without a quota, the bar is the disk's.
      await page.getByRole('progressbar', { name: 'Disk usage' }).waitFor();

      const id = (await server.ctx.store.users.getByUsername(ADMIN.username))!.id;
      await page.goto(`${server.url}/settings/users/${id}`);
      const quota = page.getByLabel('Storage quota (bytes)');
      await quota.fill(String(10 * 1024 * 1024));
      await page.getByText(/^10 MiB\. 0 means no quota/).waitFor();
      await page.getByLabel('Your current password').fill(ADMIN.password);
      // Saving one's own account renews the session: leaving the page before that signs out.
      const renewed = page.waitForResponse((r) => r.url().endsWith('/api/renew'));
      await page.getByRole('button', { name: 'Save' }).click();
      expect((await renewed).status()).toBe(200);
      expect((await server.ctx.store.users.get(id))!.quota).toBe(10 * 1024 * 1024);

      // The usage answer is waited for (the first one walks the scope) before the bar is read.
      const answer = page.waitForResponse((r) => r.url().includes('/api/usage/'));
      await page.goto(`${server.url}/files/`);
      expect((await answer).status()).toBe(200);
      await page.getByRole('progressbar', { name: 'Quota' }).waitFor();
      await page.getByText('1 MiB of 10 MiB quota used').waitFor();
      await screenshot(page, 'quota-usage-bar');
    } finally {
      await context.close();
    }
  });
});
