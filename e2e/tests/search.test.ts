import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, login, newPage, screenshot } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

describe('search', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startServer();
    const write = async (relative: string, content: string | Buffer) => {
      const file = path.join(server.root, relative);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, content);
    };
    const photo = await sharp({ create: { width: 800, height: 500, channels: 3, background: '#f4a261' } })
      .jpeg()
      .toBuffer();
    await write('holidays/beach day.jpg', photo);
    await write('holidays/2024/beach-sunset.jpg', photo);
    await write('holidays/beach notes.txt', 'sand\n');
    await write('docs/beach guide.pdf', '%PDF-1.4\n%%EOF\n');
    await write('music/beach.mp3', Buffer.alloc(64));
    await write('holidays/mountain.jpg', photo);
    browser = await launchBrowser();
    ({ page } = await newPage(browser));
    await login(page, server.url, ADMIN.username, ADMIN.password);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const results = () => page.getByRole('list', { name: 'Search results' });

  it('finds images by a type chip and opens a result in the preview', async () => {
    await page.goto(`${server.url}/files/`);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const box = page.getByRole('searchbox', { name: 'Search' });
    await box.waitFor();
    await box.fill('beach');
    await page.getByRole('button', { name: 'Images' }).click();
    expect(await box.inputValue()).toBe('type:image beach');
    await box.press('Enter');

    await page.getByText('2 results').waitFor();
    const links = results().getByRole('link');
    const texts = (await links.allTextContents())
      .map((text) => text.replace(/^insert_drive_file/, ''))
      .sort();
    expect(texts).toEqual(['./holidays/2024/beach-sunset.jpg', './holidays/beach day.jpg']);
    await screenshot(page, 'search-results');

    await results()
      .getByRole('link', { name: /beach day\.jpg/ })
      .click();
    await page.waitForURL(/\/files\/holidays\/beach%20day\.jpg$/);
    await page.getByRole('img', { name: 'beach day.jpg' }).waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
  });

  it('opens with Ctrl+F inside the current folder, finds every type, and clears when the text changes', async () => {
    await page.goto(`${server.url}/files/holidays/`);
    await page.getByRole('link', { name: /mountain\.jpg/ }).waitFor();
    await page.keyboard.press('Control+f');
    const box = page.getByRole('searchbox', { name: 'Search' });
    await box.waitFor();
    await box.fill('beach');
    await box.press('Enter');
    await page.getByText('3 results').waitFor();
    const hrefs = await results()
      .getByRole('link')
      .evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')).sort());
    expect(hrefs).toEqual([
      '/files/holidays/2024/beach-sunset.jpg',
      '/files/holidays/beach%20day.jpg',
      '/files/holidays/beach%20notes.txt',
    ]);

    await box.press('End');
    await box.type('x');
    await page.getByText('Press Enter to search.').waitFor();
    expect(await results().count()).toBe(0);

    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  it('says so when nothing matches', async () => {
    await page.goto(`${server.url}/files/`);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const box = page.getByRole('searchbox', { name: 'Search' });
    await box.fill('type:pdf mountain');
    await box.press('Enter');
    await page.getByText('No results found.').waitFor();
  });
});
