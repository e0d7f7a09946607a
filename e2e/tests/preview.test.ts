import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, login, newPage, screenshot } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

/** A photo-sized PNG (a landscape of shapes in one hue), so each step shows a different picture. */
function picture(hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="1000">
    <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="hsl(${hue},70%,75%)"/><stop offset="1" stop-color="hsl(${hue},60%,40%)"/>
    </linearGradient></defs>
    <rect width="1600" height="1000" fill="url(#sky)"/>
    <circle cx="1200" cy="260" r="120" fill="hsl(${(hue + 40) % 360},90%,85%)"/>
    <path d="M0 800 L400 450 L700 700 L1050 380 L1600 820 L1600 1000 L0 1000 Z" fill="hsl(${hue},45%,25%)"/>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

describe('image preview', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startServer();
    const pics = path.join(server.root, 'pics');
    await fs.mkdir(pics);
    await fs.writeFile(path.join(pics, 'a-red.png'), await picture(0));
    // A text file between two images: stepping skips it (it would open the editor).
    await fs.writeFile(path.join(pics, 'b-notes.txt'), 'not a picture\n');
    await fs.writeFile(path.join(pics, 'c-green.png'), await picture(130));
    await fs.writeFile(path.join(pics, 'd-blue.png'), await picture(215));
    browser = await launchBrowser();
    ({ page } = await newPage(browser));
    await login(page, server.url, ADMIN.username, ADMIN.password);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function shownImage(name: string) {
    const image = page.getByRole('img', { name });
    await image.waitFor();
    // Drawn only once loaded and measured: a decoded picture has its natural width.
    await page.waitForFunction((alt) => {
      const element = document.querySelector<HTMLImageElement>(`img[alt="${alt}"]`);
      return element !== null && element.complete && element.naturalWidth > 0;
    }, name);
    return image;
  }

  it('opens an image from the listing and steps to the next one', async () => {
    await page.goto(`${server.url}/files/pics/`);
    // In the listing a click selects and a double click opens.
    await page.locator('.item[data-name="a-red.png"]').dblclick();
    await page.waitForURL(/\/files\/pics\/a-red\.png$/);
    await shownImage('a-red.png');
    expect(await page.getByRole('button', { name: 'Previous' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Open the original' }).getAttribute('href')).toBe(
      '/api/raw/pics/a-red.png?inline=true',
    );

    await page.getByRole('button', { name: 'Next' }).click();
    await page.waitForURL(/\/files\/pics\/c-green\.png$/);
    await shownImage('c-green.png');
    await screenshot(page, 'preview-image');

    await page.keyboard.press('ArrowRight');
    await page.waitForURL(/\/files\/pics\/d-blue\.png$/);
    await shownImage('d-blue.png');
    expect(await page.getByRole('button', { name: 'Next' }).count()).toBe(0);

    await page.keyboard.press('ArrowLeft');
    await page.waitForURL(/\/files\/pics\/c-green\.png$/);
  });

  it('zooms with the keyboard and resets on double click', async () => {
    await page.goto(`${server.url}/files/pics/a-red.png`);
    const image = await shownImage('a-red.png');
    const reset = page.getByRole('button', { name: 'Fit to screen' });
    expect(await reset.textContent()).toBe('100%');

    await page.keyboard.press('+');
    await page.waitForFunction(() => document.querySelector('.image-viewer__scale')?.textContent === '200%');
    await page.mouse.move(640, 450);
    await page.mouse.wheel(0, -300);
    await page.waitForFunction(
      () => Number.parseInt(document.querySelector('.image-viewer__scale')?.textContent ?? '0') > 200,
    );

    await image.dblclick();
    await page.waitForFunction(() => document.querySelector('.image-viewer__scale')?.textContent === '100%');
  });

  it('goes back to the folder on Escape', async () => {
    await page.goto(`${server.url}/files/pics/d-blue.png`);
    await shownImage('d-blue.png');
    await page.keyboard.press('Escape');
    await page.waitForURL(/\/files\/pics\/$/);
    await page.getByRole('link', { name: /d-blue\.png/ }).waitFor();
  });

  it('shows the original at full size with F and fits it again', async () => {
    await page.goto(`${server.url}/files/pics/a-red.png`);
    await shownImage('a-red.png');
    const toggle = page.getByRole('button', { name: 'Full size' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');

    await page.keyboard.press('f');
    await page.waitForFunction(() => document.querySelector('.image-viewer__scale')?.textContent !== '100%');
    await page.waitForFunction(
      () =>
        document.querySelector('.image-viewer__image')?.getAttribute('src') ===
        '/api/raw/pics/a-red.png?inline=true',
    );
    // One pixel of the 1600 px original per screen pixel, once the zoom's transition has run.
    await page.waitForFunction(
      () =>
        Math.round(document.querySelector('.image-viewer__image')?.getBoundingClientRect().width ?? 0) ===
        1600,
    );
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');

    await toggle.click();
    await page.waitForFunction(() => document.querySelector('.image-viewer__scale')?.textContent === '100%');
  });

  it('renames the file from the preview and stays on it', async () => {
    await page.goto(`${server.url}/files/pics/c-green.png`);
    await shownImage('c-green.png');
    await page.keyboard.press('F2');
    const dialog = page.getByRole('dialog', { name: 'Rename' });
    await dialog.getByRole('textbox').fill('c-renamed.png');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await page.waitForURL(/\/files\/pics\/c-renamed\.png$/);
    await shownImage('c-renamed.png');
    expect((await fs.readdir(path.join(server.root, 'pics'))).sort()).toEqual([
      'a-red.png',
      'b-notes.txt',
      'c-renamed.png',
      'd-blue.png',
    ]);
  });

  it('deletes the file from the preview and goes on to the previous one at the end', async () => {
    await page.goto(`${server.url}/files/pics/d-blue.png`);
    await shownImage('d-blue.png');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(/\/files\/pics\/c-renamed\.png$/);
    await shownImage('c-renamed.png');
    expect((await fs.readdir(path.join(server.root, 'pics'))).sort()).toEqual([
      'a-red.png',
      'b-notes.txt',
      'c-renamed.png',
    ]);
  });
});
