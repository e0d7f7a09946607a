import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchBrowser, login, newPage } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

let server: RunningServer;
let browser: Browser;
const shares = { file: '', folder: '', locked: '' };

async function adminToken(): Promise<string> {
  const res = await fetch(`${server.url}/api/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  return res.text();
}

async function shareByApi(token: string, p: string, body: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${server.url}/api/share${p}`, {
    method: 'POST',
    headers: { 'X-Auth': token, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { hash: string }).hash;
}

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  const docs = path.join(server.root, 'docs');
  await fs.mkdir(path.join(docs, 'photos'), { recursive: true });
  await fs.writeFile(path.join(docs, 'readme.txt'), 'Hello\n');
  await fs.writeFile(path.join(docs, 'notes.md'), '# Notes\n\nSome *text*.\n');
  await fs.writeFile(path.join(docs, 'table.csv'), 'name,size\na,1\nb,2\n');
  await fs.writeFile(path.join(docs, '.hidden'), 'dotfile\n');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="400">
    <rect width="640" height="400" fill="#4a7"/><circle cx="420" cy="150" r="80" fill="#fd6"/></svg>`;
  await fs.writeFile(path.join(docs, 'photo.png'), await sharp(Buffer.from(svg)).png().toBuffer());
  const token = await adminToken();
  shares.file = await shareByApi(token, '/docs/readme.txt');
  shares.folder = await shareByApi(token, '/docs/');
  shares.locked = await shareByApi(token, '/docs/notes.md', { password: 'open sesame' });
  // Something in the trash, for its screen and its confirmation prompt.
  await fs.writeFile(path.join(docs, 'old.txt'), 'old\n');
  const deleted = await fetch(`${server.url}/api/resources/docs/old.txt`, {
    method: 'DELETE',
    headers: { 'X-Auth': token },
  });
  expect(deleted.status).toBe(204);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const entry = (page: Page, name: string) => page.locator(`.item[data-name="${name}"]`);

async function openFolder(page: Page, folder: string): Promise<void> {
  await page.goto(`${server.url}/files/${folder}`);
  await page.locator('.listing, .lonely').first().waitFor();
}

/** Checks the prompt `name` that `open` brings up, then closes it with Escape. */
async function checkPrompt(
  page: Page,
  name: string,
  label: string,
  open: () => Promise<void>,
): Promise<void> {
  await open();
  const dialog = page.getByRole('dialog', { name, exact: true });
  await dialog.waitFor();
  await expectNoAxeViolations(page, label);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
}

async function selectOnly(page: Page, name: string): Promise<void> {
  await openFolder(page, 'docs/');
  await entry(page, name).click();
  await page.locator(`.item[data-name="${name}"][aria-selected="true"]`).waitFor();
}

const headerAction = (page: Page, id: string) => page.locator(`.header [data-action="${id}"]`).click();

/** Cycles the view switch (list → mosaic → gallery) until the listing shows `view`. */
async function showView(page: Page, view: 'list' | 'mosaic' | 'gallery'): Promise<void> {
  for (let turns = 0; turns < 3; turns++) {
    if (await page.locator(`.listing--${view}`).count()) return;
    const current = await page.locator('.listing').getAttribute('class');
    await headerAction(page, 'switch-view');
    await page.waitForFunction((before) => document.querySelector('.listing')?.className !== before, current);
  }
  await page.locator(`.listing--${view}`).waitFor();
}

describe.each(['light', 'dark'] as const)('accessibility, %s theme', (theme) => {
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ({ context, page } = await newPage(browser, { colorScheme: theme }));
    await login(page, server.url, ADMIN.username, ADMIN.password);
  });
  afterAll(async () => {
    await context?.close();
  });

  it('login page', async () => {
    const { context: visitorContext, page: visitor } = await newPage(browser, { colorScheme: theme });
    try {
      await visitor.goto(`${server.url}/login`);
      await visitor.getByLabel(/username/i).waitFor();
      await expectNoAxeViolations(visitor, `login (${theme})`);
    } finally {
      await visitorContext.close();
    }
  });

  it('listing in list, mosaic and gallery views, with a selection', async () => {
    await openFolder(page, 'docs/');
    await showView(page, 'list');
    await expectNoAxeViolations(page, `listing, list view (${theme})`);
    await entry(page, 'readme.txt').click();
    await expectNoAxeViolations(page, `listing with a selection (${theme})`);
    await showView(page, 'mosaic');
    await expectNoAxeViolations(page, `listing, mosaic view (${theme})`);
    await showView(page, 'gallery');
    await expectNoAxeViolations(page, `listing, gallery view (${theme})`);
    await showView(page, 'list');
  });

  it('prompts of the sidebar and the header', async () => {
    await openFolder(page, 'docs/');
    await checkPrompt(page, 'New folder', `new folder prompt (${theme})`, () =>
      page.getByRole('button', { name: 'New folder', exact: true }).click(),
    );
    await checkPrompt(page, 'New file', `new file prompt (${theme})`, () =>
      page.getByRole('button', { name: 'New file', exact: true }).click(),
    );
    await checkPrompt(page, 'Help', `help prompt (${theme})`, () =>
      page.getByRole('button', { name: 'Help', exact: true }).click(),
    );
    await checkPrompt(page, 'Upload', `upload prompt (${theme})`, () => headerAction(page, 'upload'));
    await checkPrompt(page, 'Download', `download prompt (${theme})`, () => headerAction(page, 'download'));
    await checkPrompt(page, 'File information', `info prompt of the folder (${theme})`, () =>
      headerAction(page, 'info'),
    );
  });

  it('search prompt', async () => {
    await openFolder(page, 'docs/');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const box = page.getByRole('searchbox', { name: 'Search' });
    await box.fill('read');
    await box.press('Enter');
    await page.getByRole('list', { name: 'Search results' }).getByText('readme.txt').waitFor();
    await expectNoAxeViolations(page, `search prompt (${theme})`);
    await page.keyboard.press('Escape');
  });

  it('prompts on a selected entry', async () => {
    await selectOnly(page, 'readme.txt');
    await checkPrompt(page, 'Rename', `rename prompt (${theme})`, () => headerAction(page, 'rename'));
    await checkPrompt(page, 'Delete', `delete prompt (${theme})`, () => headerAction(page, 'delete'));
    await checkPrompt(page, 'Copy', `copy prompt (${theme})`, () => headerAction(page, 'copy'));
    await checkPrompt(page, 'Move', `move prompt (${theme})`, () => headerAction(page, 'move'));
    await checkPrompt(page, 'File information', `info prompt of a file (${theme})`, () =>
      headerAction(page, 'info'),
    );
    // The file already has a link (made in beforeAll): the prompt lists it.
    await checkPrompt(page, 'Share', `share prompt (${theme})`, async () => {
      await headerAction(page, 'share');
      await page.getByRole('list', { name: 'Share links' }).getByRole('listitem').first().waitFor();
    });
  });

  it('upload conflict prompt', async () => {
    await openFolder(page, 'docs/');
    await headerAction(page, 'upload');
    const upload = page.getByRole('dialog', { name: 'Upload' });
    const chooser = page.waitForEvent('filechooser');
    await upload.getByRole('button', { name: 'File', exact: true }).click();
    await (
      await chooser
    ).setFiles([{ name: 'readme.txt', mimeType: 'text/plain', buffer: Buffer.from('x') }]);
    const replace = page.getByRole('dialog', { name: 'Replace' });
    await replace.waitFor();
    await expectNoAxeViolations(page, `upload conflict prompt (${theme})`);
    await page.keyboard.press('Escape');
    await replace.waitFor({ state: 'detached' });
  });

  it('preview', async () => {
    await page.goto(`${server.url}/files/docs/photo.png`);
    await page.locator('.preview img').first().waitFor();
    await expectNoAxeViolations(page, `image preview (${theme})`);
  });

  it('editor, its viewers and the discard prompt', async () => {
    await page.goto(`${server.url}/files/docs/readme.txt`);
    await page.locator('.cm-content').waitFor();
    await expectNoAxeViolations(page, `editor (${theme})`);
    await page.locator('.cm-content').click();
    await page.keyboard.type('more');
    await checkPrompt(page, 'Discard changes?', `discard changes prompt (${theme})`, () =>
      page.getByRole('button', { name: 'Close' }).click(),
    );
    await page.goto(`${server.url}/files/docs/notes.md`);
    await page.locator('.cm-content').waitFor();
    await expectNoAxeViolations(page, `markdown editor (${theme})`);
    await page.goto(`${server.url}/files/docs/table.csv`);
    await page.locator('.cm-content, table').first().waitFor();
    await expectNoAxeViolations(page, `CSV viewer (${theme})`);
  });

  it('settings: profile, shares, global settings, users, the user form and the audit log', async () => {
    for (const [route, ready] of [
      ['profile', 'form'],
      ['shares', 'table, .empty-state, .lonely'],
      ['global', 'form'],
      ['users', 'table'],
      ['users/new', 'form'],
      ['users/1', 'form'],
      ['audit', 'table, .empty-state'],
    ] as const) {
      await page.goto(`${server.url}/settings/${route}`);
      await page.locator(ready).first().waitFor();
      await expectNoAxeViolations(page, `settings/${route} (${theme})`);
    }
  });

  it('trash and its confirmation prompt', async () => {
    await page.goto(`${server.url}/trash`);
    await page.getByRole('row').filter({ hasText: 'old.txt' }).waitFor();
    await expectNoAxeViolations(page, `trash (${theme})`);
    await checkPrompt(page, 'Empty the trash?', `confirmation prompt (${theme})`, () =>
      page.getByRole('button', { name: 'Empty trash' }).click(),
    );
  });

  it('public share page of a file, of a folder and behind a password', async () => {
    const { context: visitorContext, page: visitor } = await newPage(browser, { colorScheme: theme });
    try {
      await visitor.goto(`${server.url}/share/${shares.file}`);
      await visitor.getByText('readme.txt').first().waitFor();
      await expectNoAxeViolations(visitor, `share page of a file (${theme})`);
      await visitor.goto(`${server.url}/share/${shares.folder}`);
      await visitor.getByText('photo.png').first().waitFor();
      await expectNoAxeViolations(visitor, `share page of a folder (${theme})`);
      await visitor.goto(`${server.url}/share/${shares.locked}`);
      await visitor.getByLabel('Password', { exact: true }).waitFor();
      await expectNoAxeViolations(visitor, `share page asking for a password (${theme})`);
    } finally {
      await visitorContext.close();
    }
  });
});

describe.each(['light', 'dark'] as const)('accessibility on a phone-sized screen, %s theme', (theme) => {
  it('listing with a selection, the sidebar drawer and the "more" menu', async () => {
    const { context, page } = await newPage(browser, { width: 375, height: 740, colorScheme: theme });
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await openFolder(page, 'docs/');
      await expectNoAxeViolations(page, `narrow listing (${theme})`);
      await entry(page, 'readme.txt').click();
      await page.locator('.selection-bar').waitFor();
      await expectNoAxeViolations(page, `narrow listing with the selection bar (${theme})`);
      await page.getByRole('button', { name: 'More actions' }).click();
      await page.getByRole('menu').waitFor();
      await expectNoAxeViolations(page, `narrow "more" menu (${theme})`);
      await page.keyboard.press('Escape');
      await page.getByRole('menu').waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Open menu' }).click();
      await page.locator('.sidebar--open').waitFor();
      await expectNoAxeViolations(page, `narrow sidebar drawer (${theme})`);
    } finally {
      await context.close();
    }
  });
});

describe('keyboard', () => {
  it('arrow keys move through the list and the mosaic, the selection follows, Enter opens', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await openFolder(page, 'docs/');
      await showView(page, 'list');
      const focused = () =>
        page.evaluate(() => document.activeElement?.closest<HTMLElement>('.item')?.dataset.name);
      const selected = () =>
        page
          .locator('.item[aria-selected="true"]')
          .evaluateAll((items) => items.map((el) => el.getAttribute('data-name')));

      // Entries: photos | .hidden notes.md photo.png readme.txt table.csv
      await entry(page, 'notes.md').locator('.item__name').focus();
      await page.keyboard.press('ArrowDown');
      expect(await focused()).toBe('photo.png');
      expect(await selected()).toEqual(['photo.png']);
      await page.keyboard.press('Shift+ArrowDown');
      expect(await selected()).toEqual(['photo.png', 'readme.txt']);
      await page.keyboard.press('ArrowUp');
      await page.keyboard.press('ArrowUp');
      expect(await focused()).toBe('notes.md');
      expect(await selected()).toEqual(['notes.md']);

      // After a click the keys go on from the entry clicked.
      await entry(page, 'readme.txt').click();
      await page.keyboard.press('ArrowDown');
      expect(await selected()).toEqual(['table.csv']);

      // Tab leaves the listing from the focused entry: it is one stop.
      const tabStops = await page.locator('.item__name:not([tabindex="-1"])').count();
      expect(tabStops).toBe(1);

      await showView(page, 'mosaic');
      await entry(page, '.hidden').locator('.item__name').focus();
      await page.keyboard.press('ArrowRight');
      expect(await focused()).toBe('notes.md');
      await page.keyboard.press('ArrowUp');
      expect(await focused()).toBe('photos');
      await page.keyboard.press('Enter');
      await page.waitForURL(`${server.url}/files/docs/photos/`);
    } finally {
      await context.close();
    }
  });
});
