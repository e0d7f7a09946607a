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
  await fs.mkdir(path.join(server.root, 'docs'), { recursive: true });
  await fs.writeFile(path.join(server.root, 'docs', 'readme.txt'), 'Hello from a shared folder\n');
  await fs.writeFile(path.join(server.root, 'docs', 'notes.md'), '# notes\n');
  await fs.mkdir(path.join(server.root, 'many'));
  for (let i = 0; i < 150; i++) {
    await fs.writeFile(path.join(server.root, 'many', `file-${String(i).padStart(3, '0')}.txt`), `${i}\n`);
  }
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Creates a link through the API, as a script would. */
async function createShareByApi(p: string, body: Record<string, string> = {}): Promise<string> {
  const token = await (
    await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(ADMIN),
    })
  ).text();
  const res = await fetch(`${server.url}/api/share${p}`, {
    method: 'POST',
    headers: { 'X-Auth': token, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { hash: string }).hash;
}

describe('sharing', () => {
  it('shares a folder with a password from the share prompt; a visitor unlocks and downloads', async () => {
    const { context, page } = await newPage(browser);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}/files/`);
    await page.locator('.item[data-name="docs"]').click();
    await page.getByRole('button', { name: 'Share', exact: true }).click();

    const prompt = page.getByRole('dialog', { name: 'Share' });
    // No link yet: the prompt starts with the form.
    await prompt.getByLabel('Duration').fill('2');
    await prompt.getByLabel('Unit').selectOption('days');
    await prompt.getByLabel('Password (optional)').fill('  open sesame  ');
    await prompt.getByRole('button', { name: 'Share' }).click();

    const links = prompt.getByRole('list', { name: 'Share links' });
    await expect.poll(() => links.getByRole('listitem').count()).toBe(1);
    const row = links.getByRole('listitem').first();
    expect(await row.textContent()).toContain('in 2 days');
    const hash = (await row.getByRole('link').textContent())!.trim();
    expect(hash).toMatch(/^[A-Za-z0-9_-]{22}$/);
    await row.getByRole('button', { name: `Copy link ${hash}` }).click();
    await page.getByText('Link copied!').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(`${server.url}/share/${hash}`);
    await screenshot(page, 'share-prompt');
    await context.close();

    // A visitor without an account, in a fresh browser context.
    const visitor = await newPage(browser);
    const guest = visitor.page;
    await guest.goto(`${server.url}/share/${hash}`);
    const password = guest.getByLabel('Password', { exact: true });
    await password.waitFor();
    expect(await guest.getByRole('alert').count()).toBe(0);
    await password.fill('sesame');
    await guest.getByRole('button', { name: 'Submit' }).click();
    await guest.getByRole('alert').filter({ hasText: 'Wrong credentials' }).waitFor();
    await password.fill('open sesame');
    await guest.getByRole('button', { name: 'Submit' }).click();

    await guest.getByRole('heading', { name: 'docs' }).waitFor();
    expect(await guest.getByText('2 items').count()).toBe(1);
    const qr = guest.getByRole('figure', { name: 'QR code of the download link' }).locator('svg');
    await qr.waitFor();
    expect(await qr.getAttribute('height')).toBe('100');
    expect(await qr.locator('path').count()).toBeGreaterThan(0);

    await guest.getByRole('button', { name: /readme\.txt/ }).click();
    const [download] = await Promise.all([
      guest.waitForEvent('download'),
      guest.getByRole('button', { name: 'Download', exact: true }).last().click(),
    ]);
    expect(download.suggestedFilename()).toBe('readme.txt');
    expect(await fs.readFile((await download.path())!, 'utf8')).toBe('Hello from a shared folder\n');
    await screenshot(guest, 'share-page-folder');

    // Several items download as an archive in the chosen format.
    await guest.getByRole('button', { name: /notes\.md/ }).click({ modifiers: ['Control'] });
    await guest.getByText('2 items selected').waitFor();
    await guest.getByRole('button', { name: 'Download', exact: true }).last().click();
    const formats = guest.getByRole('dialog', { name: 'Download' });
    const [archive] = await Promise.all([
      guest.waitForEvent('download'),
      formats.getByRole('button', { name: 'zip', exact: true }).click(),
    ]);
    expect(archive.suggestedFilename()).toBe('_docs.zip');
    await visitor.context.close();
  });

  it('shows a shared file with its QR code and a direct download', async () => {
    const hash = await createShareByApi('/docs/readme.txt');
    const { context, page } = await newPage(browser);
    await page.goto(`${server.url}/share/${hash}`);
    await page.getByRole('heading', { name: 'readme.txt' }).waitFor();
    const qr = page.getByRole('figure', { name: 'QR code of the download link' }).locator('svg');
    expect(await qr.getAttribute('height')).toBe('200');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download', exact: true }).click(),
    ]);
    expect(await fs.readFile((await download.path())!, 'utf8')).toBe('Hello from a shared folder\n');
    await screenshot(page, 'share-page-file');
    await context.close();
  });

  it('lists the first 100 items of a big folder and a +N tile adds the rest', async () => {
    const hash = await createShareByApi('/many/');
    const { context, page } = await newPage(browser);
    await page.goto(`${server.url}/share/${hash}/`);
    const items = page.getByRole('list', { name: 'Shared items' }).locator('[aria-pressed]');
    await expect.poll(() => items.count()).toBe(100);
    await page.getByRole('button', { name: '+50' }).click();
    await expect.poll(() => items.count()).toBe(150);
    expect(await page.getByRole('button', { name: /^\+\d+$/ }).count()).toBe(0);
    await context.close();
  });

  it('deletes a link from the share management screen; the public page then says not found', async () => {
    const hash = await createShareByApi('/docs/notes.md');
    const { context, page } = await newPage(browser);
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}/settings/shares`);
    const row = page.getByRole('row').filter({ hasText: '/docs/notes.md' });
    await row.waitFor();
    expect(await row.textContent()).toContain('admin');
    await row.getByRole('button', { name: 'Delete the share of /docs/notes.md' }).click();
    await page.getByRole('dialog', { name: 'Delete share' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Share deleted!').waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: '/docs/notes.md' }).count()).toBe(0);
    await context.close();

    const visitor = await newPage(browser);
    await visitor.page.goto(`${server.url}/share/${hash}`);
    await visitor.page.getByText("This location can't be reached.").waitFor();
    await visitor.context.close();
  });
});
