import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverPaths } from '../../packages/server/src/files/access/private.js';
import { launchBrowser, login, newPage, screenshot } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  await fs.mkdir(path.join(server.root, 'docs'));
  for (const name of ['notes.txt', 'old.txt', 'keep.txt']) {
    await fs.writeFile(path.join(server.root, 'docs', name), `the ${name} of the journey`);
  }
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const entry = (page: Page, name: string) => page.locator(`.item[data-name="${name}"]`);
const row = (page: Page, name: string) => page.getByRole('row').filter({ hasText: name });
const dialog = (page: Page, name: string) => page.getByRole('dialog', { name });
const onDisk = (relative: string) =>
  fs.access(path.join(server.root, relative)).then(
    () => true,
    () => false,
  );

/** Deletes one entry of the folder on screen through the header's delete action. */
async function deleteEntry(page: Page, name: string): Promise<void> {
  await entry(page, name).click();
  await page.locator('.header [data-action="delete"]').click();
  await dialog(page, 'Delete').getByRole('button', { name: 'Delete' }).click();
  await expect.poll(() => entry(page, name).count()).toBe(0);
}

async function openTrash(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Trash' }).click();
  await page.waitForURL(`${server.url}/trash`);
  await page.getByRole('heading', { name: 'Trash' }).waitFor();
}

describe('trash', () => {
  it('a deleted file goes to the trash, comes back where it was, and can be deleted forever', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await page.goto(`${server.url}/files/docs/`);
      await entry(page, 'notes.txt').waitFor();

      // Delete: gone from the folder and from its place on disk.
      await deleteEntry(page, 'notes.txt');
      expect(await onDisk('docs/notes.txt')).toBe(false);

      // The trash lists it with its folder; restore puts it back.
      await openTrash(page);
      await row(page, 'notes.txt').waitFor();
      expect(await row(page, 'notes.txt').textContent()).toContain('/docs');
      await screenshot(page, 'trash-one-item');
      await page.getByRole('checkbox', { name: 'Select notes.txt' }).check();
      await page.getByRole('button', { name: 'Restore' }).click();
      await page.getByText('The trash is empty.').waitFor();
      expect(await fs.readFile(path.join(server.root, 'docs', 'notes.txt'), 'utf8')).toBe(
        'the notes.txt of the journey',
      );
      await page.goto(`${server.url}/files/docs/`);
      await entry(page, 'notes.txt').waitFor();

      // A name taken meanwhile: the screen asks, and keeping both restores it beside.
      await deleteEntry(page, 'keep.txt');
      await fs.writeFile(path.join(server.root, 'docs', 'keep.txt'), 'a new keep.txt');
      await openTrash(page);
      await page.getByRole('checkbox', { name: 'Select keep.txt' }).check();
      await page.getByRole('button', { name: 'Restore' }).click();
      await dialog(page, 'Replace or rename').getByRole('button', { name: 'Rename' }).click();
      await page.getByText('The trash is empty.').waitFor();
      expect(await fs.readFile(path.join(server.root, 'docs', 'keep(1).txt'), 'utf8')).toBe(
        'the keep.txt of the journey',
      );
      expect(await fs.readFile(path.join(server.root, 'docs', 'keep.txt'), 'utf8')).toBe('a new keep.txt');

      // Delete forever: asked first, then the bytes are gone from the trash folder too.
      await page.goto(`${server.url}/files/docs/`);
      await deleteEntry(page, 'old.txt');
      await openTrash(page);
      await page.getByRole('checkbox', { name: 'Select old.txt' }).check();
      await page.getByRole('button', { name: 'Delete forever' }).click();
      await dialog(page, 'Delete forever?').getByRole('button', { name: 'Delete forever' }).click();
      await page.getByText('The trash is empty.').waitFor();
      await screenshot(page, 'trash-empty');
      expect(await onDisk('docs/old.txt')).toBe(false);
      expect(await server.ctx.store.trash.list(1)).toEqual([]);
      const trashDir = serverPaths(server.ctx.config).trashDir;
      const left = await fs.readdir(path.join(trashDir, '1')).catch(() => []);
      expect(left).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
