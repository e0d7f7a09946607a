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
  await fs.writeFile(path.join(server.root, 'hello.txt'), 'hello from the server');
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('API tokens', () => {
  it('a user makes a read-only token in the profile, a script uses it, and revoking it ends it', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await page.goto(`${server.url}/settings/profile`);
      await page.getByRole('heading', { name: 'API tokens' }).waitFor();
      await page.getByText('No API tokens yet.').waitFor();

      const form = page.getByRole('form', { name: 'Create token' });
      await form.getByLabel('Name').fill('nightly backup');
      await form.getByLabel('Expires').selectOption('7');
      await form.getByLabel('Access').selectOption('read');
      await form.getByLabel('Your current password').fill(ADMIN.password);
      await form.getByRole('button', { name: 'Create token' }).click();

      await page.getByText('Copy it now: it will not be shown again.').waitFor();
      const secret = await page
        .getByRole('textbox', { name: 'Your new token “nightly backup”' })
        .inputValue();
      expect(secret).toMatch(/^fbt_[0-9a-f]{16}_/);
      await page.getByRole('row').filter({ hasText: 'nightly backup' }).waitFor();
      await screenshot(page, 'api-token-created');

      const call = (method: string, url: string) =>
        fetch(`${server.url}${url}`, { method, headers: { Authorization: `Bearer ${secret}` } });
      const raw = await call('GET', '/api/raw/hello.txt');
      expect(raw.status).toBe(200);
      expect(await raw.text()).toBe('hello from the server');
      const write = await call('DELETE', '/api/resources/hello.txt');
      expect(write.status).toBe(403);
      expect(await write.text()).toContain('the API token “nightly backup” is read-only');

      // The secret is shown once: after a reload only the row is left.
      await page.reload();
      await page.getByRole('row').filter({ hasText: 'nightly backup' }).waitFor();
      expect(await page.getByText('Copy it now: it will not be shown again.').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      expect(await page.getByRole('row').filter({ hasText: 'nightly backup' }).textContent()).not.toContain(
        'Never',
      );

      await page.getByRole('button', { name: 'Revoke the token nightly backup' }).click();
      const dialog = page.getByRole('dialog', { name: 'Revoke token' });
      await dialog.getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('No API tokens yet.').waitFor();
      expect((await call('GET', '/api/raw/hello.txt')).status).toBe(401);
    } finally {
      await context.close();
    }
  });
});
