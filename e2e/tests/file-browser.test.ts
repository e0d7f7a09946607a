import { execFileSync } from 'node:child_process';
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
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const entry = (page: Page, name: string) => page.locator(`.item[data-name="${name}"]`);
const selectedNames = (page: Page) =>
  page
    .locator('.item[aria-selected="true"]')
    .evaluateAll((items) => items.map((el) => el.getAttribute('data-name')));
const exists = (relative: string) =>
  fs.access(path.join(server.root, relative)).then(
    () => true,
    () => false,
  );
const dialog = (page: Page, name: string) => page.getByRole('dialog', { name });

async function openFolder(page: Page, folder: string): Promise<void> {
  await page.goto(`${server.url}/files/${folder}`);
  await page.locator('.listing, .lonely').first().waitFor();
}

/** Sidebar entries sit in a drawer behind the menu button on phones. */
async function sidebar(page: Page, narrow: boolean, name: string): Promise<void> {
  if (narrow) await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('button', { name, exact: true }).click();
}

/** An action of the header: in the bar beneath the header (selection) or the 'more' menu on phones. */
async function action(page: Page, narrow: boolean, id: string): Promise<void> {
  if (!narrow) {
    await page.locator(`.header [data-action="${id}"]`).click();
    return;
  }
  const bar = page.locator(`.selection-bar [data-action="${id}"]`);
  if (await bar.count()) {
    await bar.click();
    return;
  }
  await page.getByRole('button', { name: 'More actions' }).click();
  await page.locator(`.dropdown [data-action="${id}"]`).click();
}

/**
 * The main journey: create, rename, copy and paste, cut and paste, drag onto a folder, download a
 * folder as tar.gz, delete. Run at desktop width and on a phone-sized screen.
 */
async function mainJourney(page: Page, narrow: boolean, base: string): Promise<void> {
  const label = narrow ? 'narrow' : 'wide';
  await login(page, server.url, ADMIN.username, ADMIN.password);

  // A new folder opens once created.
  await sidebar(page, narrow, 'New folder');
  await dialog(page, 'New folder').getByRole('textbox').fill(`  ${base}  `);
  await dialog(page, 'New folder').getByRole('button', { name: 'Create' }).click();
  await page.waitForURL(`${server.url}/files/${base}/`);
  await page.getByText('It feels lonely here...').waitFor();
  expect(await exists(base)).toBe(true);

  // A new file opens too; the breadcrumbs lead back.
  await sidebar(page, narrow, 'New file');
  await dialog(page, 'New file').getByRole('textbox').fill('notes.txt');
  await dialog(page, 'New file').getByRole('button', { name: 'Create' }).click();
  await page.waitForURL(`${server.url}/files/${base}/notes.txt`);
  await page.getByRole('heading', { name: 'notes.txt' }).waitFor();
  expect(await exists(`${base}/notes.txt`)).toBe(true);
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: base }).click();
  await entry(page, 'notes.txt').waitFor();

  // Rename (the name is trimmed).
  await entry(page, 'notes.txt').click();
  if (narrow) await page.locator('.selection-bar').getByText('1 selected').waitFor();
  await action(page, narrow, 'rename');
  await dialog(page, 'Rename').getByRole('textbox').fill(' todo.txt ');
  await dialog(page, 'Rename').getByRole('button', { name: 'Rename' }).click();
  await entry(page, 'todo.txt').waitFor();
  expect(await exists(`${base}/todo.txt`)).toBe(true);
  expect(await exists(`${base}/notes.txt`)).toBe(false);

  // Copy and paste into the same folder: the copy gets a free name.
  await entry(page, 'todo.txt').click();
  await page.keyboard.press('Control+c');
  await page.keyboard.press('Control+v');
  await entry(page, 'todo(1).txt').waitFor();
  expect(await exists(`${base}/todo(1).txt`)).toBe(true);

  // A second folder, for the cut and the drag.
  await page.keyboard.press('Escape');
  await sidebar(page, narrow, 'New folder');
  await dialog(page, 'New folder').getByRole('textbox').fill('Archive');
  await dialog(page, 'New folder').getByRole('button', { name: 'Create' }).click();
  await page.waitForURL(`${server.url}/files/${base}/Archive/`);
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: base }).click();
  await entry(page, 'Archive').waitFor();
  await screenshot(page, `files-journey-${label}-before-cut`);

  // Cut, open the other folder with a double click, paste: the entry moves.
  await entry(page, 'todo(1).txt').click();
  await page.keyboard.press('Control+x');
  await entry(page, 'Archive').dblclick();
  await page.waitForURL(`${server.url}/files/${base}/Archive/`);
  await page.getByText('It feels lonely here...').waitFor();
  await page.keyboard.press('Control+v');
  await entry(page, 'todo(1).txt').waitFor();
  expect(await exists(`${base}/Archive/todo(1).txt`)).toBe(true);
  expect(await exists(`${base}/todo(1).txt`)).toBe(false);

  // Drag an entry onto a folder: it moves there.
  await page.goBack();
  await entry(page, 'todo.txt').waitFor();
  await expect.poll(() => entry(page, 'todo(1).txt').count()).toBe(0);
  await entry(page, 'todo.txt').dragTo(entry(page, 'Archive'));
  // A move runs as a job: the listing reloads when the jobs panel sees it end.
  await expect.poll(() => entry(page, 'todo.txt').count(), { timeout: 15_000 }).toBe(0);
  expect(await exists(`${base}/Archive/todo.txt`)).toBe(true);

  // Download the folder as tar.gz and look inside.
  await entry(page, 'Archive').click();
  await action(page, narrow, 'download');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    dialog(page, 'Download').getByRole('button', { name: 'tar.gz', exact: true }).click(),
  ]);
  expect(download.suggestedFilename()).toBe('Archive.tar.gz');
  const saved = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-dl-')), 'Archive.tar.gz');
  await download.saveAs(saved);
  const members = execFileSync('tar', ['-tzf', saved], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .sort();
  expect(members).toEqual(['todo(1).txt', 'todo.txt']);

  // Delete it.
  await entry(page, 'Archive').click();
  await action(page, narrow, 'delete');
  await dialog(page, 'Delete').getByText('Are you sure you want to delete Archive?').waitFor();
  await dialog(page, 'Delete').getByRole('button', { name: 'Delete' }).click();
  await page.getByText('It feels lonely here...').waitFor();
  expect(await exists(`${base}/Archive`)).toBe(false);
  await screenshot(page, `files-journey-${label}-done`);
}

describe('file browser', () => {
  it('creates, renames, copies, moves, drags, downloads and deletes (1280 px)', async () => {
    const { context, page } = await newPage(browser);
    try {
      await mainJourney(page, false, 'Journey');
    } finally {
      await context.close();
    }
  });

  it('does the same on a phone-sized screen (375 px)', async () => {
    const { context, page } = await newPage(browser, { width: 375, height: 740 });
    try {
      await mainJourney(page, true, 'Phone journey');
    } finally {
      await context.close();
    }
  });

  it('answers every keyboard shortcut of the listing', async () => {
    const dir = path.join(server.root, 'Keys');
    await fs.mkdir(path.join(dir, 'sub'), { recursive: true });
    await fs.writeFile(path.join(dir, 'one.txt'), 'first file');
    await fs.writeFile(path.join(dir, 'two.txt'), 'second');
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await openFolder(page, 'Keys/');
      await entry(page, 'one.txt').waitFor();

      // F1: the help lists the shortcuts and the mouse gestures; Escape closes it.
      await page.keyboard.press('F1');
      const help = dialog(page, 'Help');
      for (const key of [
        'F1',
        'F2',
        'Del',
        'Esc',
        'Ctrl + F',
        'Ctrl + C',
        'Ctrl + X',
        'Ctrl + V',
        'Ctrl + A',
        'Ctrl + S',
        'Ctrl + Click',
        'Click',
        'Double click',
      ]) {
        await help.locator('kbd', { hasText: new RegExp(`^${key.replace(/[+]/g, '\\+')}$`) }).waitFor();
      }
      await page.keyboard.press('Escape');
      await help.waitFor({ state: 'detached' });

      // Ctrl+A selects everything, Escape clears the selection.
      await page.keyboard.press('Control+a');
      expect(await selectedNames(page)).toEqual(['sub', 'one.txt', 'two.txt']);
      await page.keyboard.press('Escape');
      expect(await selectedNames(page)).toEqual([]);

      // Shift adds a range, Ctrl/Meta toggles one entry.
      await entry(page, 'sub').click();
      await entry(page, 'two.txt').click({ modifiers: ['Shift'] });
      expect(await selectedNames(page)).toEqual(['sub', 'one.txt', 'two.txt']);
      await entry(page, 'one.txt').click({ modifiers: ['Control'] });
      expect(await selectedNames(page)).toEqual(['sub', 'two.txt']);

      // F2 needs exactly one entry; then it renames.
      await page.keyboard.press('F2');
      expect(await page.getByRole('dialog').count()).toBe(0);
      await entry(page, 'one.txt').click();
      await page.keyboard.press('F2');
      await dialog(page, 'Rename').waitFor();
      await page.keyboard.press('Escape');
      await dialog(page, 'Rename').waitFor({ state: 'detached' });

      // Delete opens the delete prompt for the selection.
      await page.keyboard.press('Delete');
      await dialog(page, 'Delete').getByText('Are you sure you want to delete one.txt?').waitFor();
      await page.keyboard.press('Escape');
      expect(await exists('Keys/one.txt')).toBe(true);

      // Ctrl+S downloads one selected file directly.
      const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Control+s')]);
      expect(download.suggestedFilename()).toBe('one.txt');
      const saved = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-dl-')), 'one.txt');
      await download.saveAs(saved);
      expect(await fs.readFile(saved, 'utf8')).toBe('first file');

      // Ctrl+X, then Ctrl+V in a subfolder moves; the cut is used up.
      await page.keyboard.press('Control+x');
      await expect.poll(() => entry(page, 'one.txt').getAttribute('class')).toContain('item--cut');
      await entry(page, 'sub').dblclick();
      await page.waitForURL(`${server.url}/files/Keys/sub/`);
      await page.getByText('It feels lonely here...').waitFor();
      await page.keyboard.press('Control+v');
      await entry(page, 'one.txt').waitFor();
      expect(await exists('Keys/sub/one.txt')).toBe(true);
      expect(await exists('Keys/one.txt')).toBe(false);

      // Ctrl+C keeps the clipboard: pasting twice into another folder, the second time with a clash.
      await entry(page, 'one.txt').click();
      await page.keyboard.press('Control+c');
      await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'Keys' }).click();
      await entry(page, 'two.txt').waitFor();
      await page.keyboard.press('Control+v');
      await entry(page, 'one.txt').waitFor();
      await page.keyboard.press('Control+v');
      const clash = dialog(page, 'Replace or rename');
      await clash.waitFor();
      await clash.getByRole('button', { name: 'Rename' }).click();
      await entry(page, 'one(1).txt').waitFor();
      expect(await exists('Keys/sub/one.txt')).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('keeps the sorting and the view mode after a reload, and shows each view', async () => {
    const dir = path.join(server.root, 'Views');
    await fs.mkdir(path.join(dir, 'folder'), { recursive: true });
    await fs.writeFile(path.join(dir, 'alpha.txt'), 'x');
    await fs.writeFile(path.join(dir, 'beta.bin'), Buffer.alloc(50_000));
    await fs.writeFile(path.join(dir, 'gamma.txt'), 'x'.repeat(2000));
    const admin = await server.ctx.store.users.getByUsername(ADMIN.username);
    if (!admin) throw new Error('no admin');
    await server.ctx.store.users.update({ ...admin, viewMode: 'list', sorting: { by: 'name', asc: false } });

    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await openFolder(page, 'Views/');
      await page.locator('.listing--list').waitFor();
      const names = () =>
        page.locator('.item').evaluateAll((items) => items.map((el) => el.getAttribute('data-name')));
      expect(await names()).toEqual(['folder', 'alpha.txt', 'beta.bin', 'gamma.txt']);
      await screenshot(page, 'files-view-list');

      // Size: largest first; again: smallest first (folders stay on top). Both are saved to the user.
      await page.getByRole('columnheader', { name: 'Size' }).getByRole('button').click();
      await expect.poll(names).toEqual(['folder', 'beta.bin', 'gamma.txt', 'alpha.txt']);
      expect(await page.getByRole('columnheader', { name: 'Size' }).getAttribute('aria-sort')).toBe(
        'descending',
      );
      await page.getByRole('columnheader', { name: 'Size' }).getByRole('button').click();
      await expect.poll(names).toEqual(['folder', 'alpha.txt', 'gamma.txt', 'beta.bin']);
      expect((await server.ctx.store.users.getByUsername(ADMIN.username))?.sorting).toEqual({
        by: 'size',
        asc: true,
      });

      // The view switch cycles list, mosaic, gallery and is saved too.
      await page.locator('.header [data-action="switch-view"]').click();
      await page.locator('.listing--mosaic').waitFor();
      await expect
        .poll(async () => (await server.ctx.store.users.getByUsername(ADMIN.username))?.viewMode)
        .toBe('mosaic');
      await screenshot(page, 'files-view-mosaic');

      await page.reload();
      await page.locator('.listing--mosaic').waitFor();
      expect(await page.getByRole('columnheader', { name: 'Size' }).getAttribute('aria-sort')).toBe(
        'ascending',
      );
      expect(await names()).toEqual(['folder', 'alpha.txt', 'gamma.txt', 'beta.bin']);

      await page.locator('.header [data-action="switch-view"]').click();
      await page.locator('.listing--gallery').waitFor();
      await expect
        .poll(async () => (await server.ctx.store.users.getByUsername(ADMIN.username))?.viewMode)
        .toBe('mosaic gallery');
      await screenshot(page, 'files-view-gallery');
      await page.locator('.header [data-action="switch-view"]').click();
      await page.locator('.listing--list').waitFor();
      await expect
        .poll(async () => (await server.ctx.store.users.getByUsername(ADMIN.username))?.viewMode)
        .toBe('list');
    } finally {
      await context.close();
    }
  });

  it('keeps a folder of 20,000 entries to a few rows in the page and scrolls to its end', async () => {
    const dir = path.join(server.root, 'Many');
    await fs.mkdir(dir);
    const names = Array.from({ length: 20_000 }, (_, i) => `entry-${String(i).padStart(5, '0')}.txt`);
    for (let i = 0; i < names.length; i += 500) {
      await Promise.all(names.slice(i, i + 500).map((name) => fs.writeFile(path.join(dir, name), '')));
    }
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await openFolder(page, 'Many/');
      await entry(page, 'entry-00000.txt').waitFor();
      expect(await page.locator('.item').count()).toBeLessThan(200);
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await entry(page, 'entry-19999.txt').waitFor();
      expect(await page.locator('.item').count()).toBeLessThan(200);
      expect(await entry(page, 'entry-00000.txt').count()).toBe(0);
      // Select all works on what is not rendered too.
      await page.keyboard.press('Control+a');
      await page.locator('.actions__count', { hasText: '20000 selected' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('works by touch: a tap selects, a double tap opens, "select multiple" adds with taps', async () => {
    const dir = path.join(server.root, 'Touch');
    await fs.mkdir(path.join(dir, 'inner'), { recursive: true });
    await fs.writeFile(path.join(dir, 'a.txt'), 'a');
    await fs.writeFile(path.join(dir, 'b.txt'), 'b');
    const context = await browser.newContext({
      viewport: { width: 375, height: 740 },
      hasTouch: true,
      isMobile: true,
    });
    const page = await context.newPage();
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await openFolder(page, 'Touch/');
      await entry(page, 'a.txt').tap();
      expect(await selectedNames(page)).toEqual(['a.txt']);
      await page.locator('.selection-bar').getByText('1 selected').waitFor();
      await entry(page, 'b.txt').tap();
      expect(await selectedNames(page)).toEqual(['b.txt']);

      await page.getByRole('button', { name: 'More actions' }).tap();
      await page.locator('.dropdown [data-action="select-multiple"]').tap();
      await entry(page, 'a.txt').tap();
      expect(await selectedNames(page)).toEqual(['a.txt', 'b.txt']);
      await page.locator('.selection-bar').getByText('2 selected').waitFor();
      await screenshot(page, 'files-touch-select-multiple');
      await page.getByRole('button', { name: 'Clear selection' }).tap();
      expect(await selectedNames(page)).toEqual([]);

      await entry(page, 'inner').tap();
      await entry(page, 'inner').tap();
      await page.waitForURL(`${server.url}/files/Touch/inner/`);
    } finally {
      await context.close();
    }
  });
});
