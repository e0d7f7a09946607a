import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, login, newPage, screenshot } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await fs.mkdir(path.join(server.root, 'docs'));
  await fs.writeFile(path.join(server.root, 'docs', 'draft.txt'), 'a draft');
  await fs.writeFile(path.join(server.root, 'elsewhere.txt'), 'elsewhere');
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const entry = (page: Page, name: string) => page.locator(`.item[data-name="${name}"]`);
const dialog = (page: Page, name: string) => page.getByRole('dialog', { name });
const auditRows = (page: Page) => page.locator('.settings table tbody tr');

describe('audit log', () => {
  it('records changes made in the browser; Settings → Audit filters and exports them', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);

      // Changes: rename a file in docs, delete another file outside it.
      await page.goto(`${server.url}/files/docs/`);
      await entry(page, 'draft.txt').click();
      await page.locator('.header [data-action="rename"]').click();
      await dialog(page, 'Rename').getByRole('textbox').fill('final.txt');
      await dialog(page, 'Rename').getByRole('button', { name: 'Rename' }).click();
      await entry(page, 'final.txt').waitFor();
      await page.goto(`${server.url}/files/`);
      await entry(page, 'elsewhere.txt').click();
      await page.locator('.header [data-action="delete"]').click();
      await dialog(page, 'Delete').getByRole('button', { name: 'Delete' }).click();
      await expect.poll(() => entry(page, 'elsewhere.txt').count()).toBe(0);

      // Settings → Audit: newest first, the sign-in included.
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('link', { name: 'Audit log' }).click();
      await page.waitForURL(`${server.url}/settings/audit`);
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();
      await auditRows(page).first().waitFor();
      const all = await auditRows(page).allTextContents();
      expect(all[0]).toContain('file.delete');
      expect(all.some((r) => r.includes('/docs/draft.txt → /docs/final.txt'))).toBe(true);
      expect(all.some((r) => r.includes('auth.login'))).toBe(true);
      await screenshot(page, 'audit-all');

      // Filter by path: only what happened below /docs.
      await page.getByLabel('Path (and below)').fill('/docs');
      await page.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(async () => (await auditRows(page).allTextContents()).length).toBe(1);
      expect(await auditRows(page).first().textContent()).toContain('file.rename');
      await screenshot(page, 'audit-filtered');

      // Export: the same filter, as CSV.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export CSV' }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(/^audit-.*\.csv$/);
      const saved = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-')), 'audit.csv');
      await download.saveAs(saved);
      const lines = (await fs.readFile(saved, 'utf8')).trimEnd().split('\r\n');
      expect(lines[0]).toBe('id,time,user,userID,address,action,path,destination,result,status,detail');
      expect(lines).toHaveLength(2);
      expect(lines[1]).toContain(',admin,');
      expect(lines[1]).toContain(',file.rename,/docs/draft.txt,/docs/final.txt,ok,200,');
    } finally {
      await context.close();
    }
  });
});
