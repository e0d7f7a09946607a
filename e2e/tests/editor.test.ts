import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../packages/server/src/auth/accounts.js';
import { launchBrowser, login, newPage, screenshot } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

const READER = { username: 'reader', password: 'reader-e2e-password-9317' };

describe('text editor', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startServer();
    const docs = path.join(server.root, 'docs');
    await fs.mkdir(docs);
    await fs.writeFile(path.join(docs, 'notes.txt'), 'first line\n');
    await fs.writeFile(path.join(docs, 'draft.md'), '# Draft\n');
    await fs.writeFile(path.join(docs, 'app.js'), 'const answer = 42;\n');
    // Someone who may read but not change files: the server calls text files textImmutable for them.
    await createAccount(
      server.ctx,
      {
        username: READER.username,
        perm: {
          admin: false,
          execute: false,
          create: false,
          rename: false,
          modify: false,
          delete: false,
          share: false,
          download: true,
        },
      },
      READER.password,
      'cli',
    );
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const editorText = (name: string) => page.getByRole('textbox', { name: `Contents of ${name}` });

  describe('as a user who may modify', () => {
    beforeAll(async () => {
      ({ page } = await newPage(browser));
      await login(page, server.url, ADMIN.username, ADMIN.password);
    });
    afterAll(async () => {
      await page.context().close();
    });

    it('edits a file, saves it with Ctrl+S and still shows the change after a reload', async () => {
      await page.goto(`${server.url}/files/docs/`);
      // In the listing a click selects and a double click opens.
      await page.locator('.item[data-name="notes.txt"]').dblclick();
      await page.waitForURL(/\/files\/docs\/notes\.txt$/);
      const text = editorText('notes.txt');
      await text.waitFor();
      expect(await text.textContent()).toBe('first line');

      await text.click();
      await page.keyboard.press('ControlOrMeta+End');
      await page.keyboard.type('second line');
      await page.getByText('Unsaved changes').waitFor();
      await page.keyboard.press('Control+s');
      await page.getByText('File saved!').waitFor();
      await page.getByText('Unsaved changes').waitFor({ state: 'detached' });
      expect(await fs.readFile(path.join(server.root, 'docs/notes.txt'), 'utf8')).toBe(
        'first line\nsecond line',
      );

      await page.reload();
      await editorText('notes.txt').waitFor();
      await page.waitForFunction(() =>
        document.querySelector('.cm-content')?.textContent?.includes('second line'),
      );
    });

    it('highlights code by its file name', async () => {
      await page.goto(`${server.url}/files/docs/app.js`);
      await editorText('app.js').waitFor();
      // The JavaScript chunk loads lazily; then keywords get their own styled spans.
      await page.waitForFunction(() => {
        const keyword = Array.from(document.querySelectorAll('.cm-line span')).find(
          (s) => s.textContent === 'const',
        );
        return (
          keyword !== undefined &&
          getComputedStyle(keyword).color !== getComputedStyle(keyword.parentElement!).color
        );
      });
      await screenshot(page, 'editor');
    });

    it('asks before leaving with unsaved changes, and discarding leaves the file as it was', async () => {
      await page.goto(`${server.url}/files/docs/draft.md`);
      const text = editorText('draft.md');
      await text.waitFor();
      await text.click();
      await page.keyboard.press('ControlOrMeta+End');
      await page.keyboard.type('never saved');
      await page.getByText('Unsaved changes').waitFor();

      await page.getByRole('button', { name: 'Close' }).click();
      const dialog = page.getByRole('dialog', { name: 'Discard changes?' });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(page.url()).toMatch(/\/files\/docs\/draft\.md$/);

      // A breadcrumb link is held back the same way.
      await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'docs' }).click();
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Discard changes' }).click();
      await page.waitForURL(/\/files\/docs\/$/);
      expect(await fs.readFile(path.join(server.root, 'docs/draft.md'), 'utf8')).toBe('# Draft\n');
    });

    it('holds back the Back button too while changes are unsaved', async () => {
      await page.goto(`${server.url}/files/docs/`);
      await page.locator('.item[data-name="draft.md"]').dblclick();
      const text = editorText('draft.md');
      await text.waitFor();
      await text.click();
      await page.keyboard.type('unsaved line');
      await page.getByText('Unsaved changes').waitFor();

      const dialog = page.getByRole('dialog', { name: 'Discard changes?' });
      await page.evaluate(() => history.back());
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(page.url()).toMatch(/\/files\/docs\/draft\.md$/);
      expect(await text.textContent()).toContain('unsaved line');

      await page.evaluate(() => history.back());
      await dialog.getByRole('button', { name: 'Discard changes' }).click();
      await page.waitForURL(/\/files\/docs\/$/);
      expect(await fs.readFile(path.join(server.root, 'docs/draft.md'), 'utf8')).toBe('# Draft\n');
    });
  });

  describe('as a user who may not modify', () => {
    beforeAll(async () => {
      ({ page } = await newPage(browser, { colorScheme: 'dark' }));
      await login(page, server.url, READER.username, READER.password);
    });
    afterAll(async () => {
      await page.context().close();
    });

    it('opens a textImmutable file read-only', async () => {
      await page.goto(`${server.url}/files/docs/notes.txt`);
      const text = editorText('notes.txt');
      await text.waitFor();
      expect(await text.getAttribute('aria-readonly')).toBe('true');
      await page.getByText('Read-only').waitFor();
      expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);

      await text.click();
      await page.keyboard.type('typed anyway');
      expect(await text.textContent()).not.toContain('typed anyway');
      await screenshot(page, 'editor-read-only-dark');
    });

    it('colours code for the dark theme', async () => {
      await page.goto(`${server.url}/files/docs/app.js`);
      await editorText('app.js').waitFor();
      await page.waitForFunction(() => {
        const keyword = Array.from(document.querySelectorAll('.cm-line span')).find(
          (s) => s.textContent === 'const',
        );
        // One Dark's keyword purple, not the light theme's.
        return keyword !== undefined && getComputedStyle(keyword).color === 'rgb(198, 120, 221)';
      });
      await screenshot(page, 'editor-dark');
    });
  });
});
