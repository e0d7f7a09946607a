import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredSettings } from '../../packages/server/src/store/settings.js';
import { expectNoAxeViolations } from '../support/axe.js';
import { launchBrowser, login, newPage, screenshot } from '../support/browser.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

let server: RunningServer;
let browser: Browser;
let bin: string;
/** The `before_copy` hook reads this pipe: a copy waits until the test writes to it. */
let gate: string;

/** The quick-setup administrator's id. */
const ADMIN_ID = 1;
const FILES = 40;
const FILE_SIZE = 64 * 1024;

beforeAll(async () => {
  bin = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-e2e-jobs-'));
  gate = path.join(bin, 'gate');
  execFileSync('mkfifo', [gate]);
  await fs.writeFile(path.join(bin, 'hold'), `#!/bin/sh\ncat '${gate}' > /dev/null\n`, { mode: 0o755 });
  server = await startServer({ disableExec: false, execPath: `${bin}:/usr/bin:/bin` });
  const settings = server.ctx.store.settings.get();
  await server.ctx.store.settings.save({
    ...settings,
    commands: { ...settings.commands, before_copy: ['hold'] },
  } as StoredSettings);
  browser = await launchBrowser();
  await fs.mkdir(path.join(server.root, 'Big', 'inner'), { recursive: true });
  for (let i = 0; i < FILES; i++) {
    const where = i % 2 ? path.join(server.root, 'Big') : path.join(server.root, 'Big', 'inner');
    await fs.writeFile(path.join(where, `part-${i}.bin`), Buffer.alloc(FILE_SIZE, i));
  }
  await fs.mkdir(path.join(server.root, 'Backup'));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await fs.rm(bin, { recursive: true, force: true });
});

const entry = (page: Page, name: string) => page.locator(`.item[data-name="${name}"]`);
const dialog = (page: Page, name: string) => page.getByRole('dialog', { name });
const jobsPanel = (page: Page) => page.getByRole('region', { name: 'Work in progress' });

describe('long work', () => {
  it('a copy of a big folder shows its progress, leaves the listing usable, and cancels cleanly', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await page.goto(`${server.url}/files/`);
      await entry(page, 'Big').click();
      await page.locator('.header [data-action="copy"]').click();
      const picker = dialog(page, 'Copy');
      await picker.getByRole('button', { name: /Backup/ }).click();
      await picker.getByRole('button', { name: 'Copy', exact: true }).click();

      // The job has counted what it carries and waits (in the before_copy hook) with 0 bytes done.
      const panel = jobsPanel(page);
      await panel.getByText('Copying Big').waitFor();
      await panel.getByText('0% · 0 B / 2.5 MiB').waitFor();
      await screenshot(page, 'jobs-copy-progress');

      // The prompt took the page to the destination (redirect after copy); the listing answers
      // meanwhile: go back up and into the folder being copied.
      await page.waitForURL(`${server.url}/files/Backup/`);
      await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link').first().click();
      await entry(page, 'Big').dblclick();
      await page.waitForURL(`${server.url}/files/Big/`);
      await entry(page, 'inner').waitFor();
      // A reload forgets nothing: the page follows the user's running jobs again.
      await page.reload();
      await panel.getByText('0% · 0 B / 2.5 MiB').waitFor();

      // Cancel, then let the hook go: the copy stops at once and removes what it made.
      await panel.getByRole('button', { name: 'Cancel Big' }).click();
      await panel.getByText('Cancelling…').waitFor();
      await fs.writeFile(gate, 'go\n');
      await expect.poll(() => jobsPanel(page).count()).toBe(0);
      expect(await fs.readdir(path.join(server.root, 'Backup'))).toEqual([]);
      expect((await fs.readdir(path.join(server.root, 'Big'), { recursive: true })).length).toBe(FILES + 1);
      const running = server.ctx.jobs.runningHere({ id: ADMIN_ID });
      expect(running).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('an archive download is followed in the page until it is done', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await page.goto(`${server.url}/files/`);
      // The page's first look at the job is held, so the panel shows the download until then.
      const polled = new Promise<Route>((resolve) => {
        void page.route('**/api/jobs/*', (route) => resolve(route));
      });
      await entry(page, 'Big').click();
      await page.locator('.header [data-action="download"]').click();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        dialog(page, 'Download').getByRole('button', { name: 'zip', exact: true }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('Big.zip');
      const panel = jobsPanel(page);
      await panel.getByText('Downloading Big').waitFor();
      await screenshot(page, 'jobs-download-progress');
      await download.path();

      // The server counted every byte of the folder as read.
      const route = await polled;
      const id = decodeURIComponent(route.request().url().split('/api/jobs/')[1] ?? '');
      await server.ctx.jobs.here({ id: ADMIN_ID }, id)?.ended;
      const answer = await route.fetch();
      const job = (await answer.json()) as { state: string; bytesDone: number; bytesTotal: number };
      expect(job).toMatchObject({
        state: 'done',
        bytesTotal: FILES * FILE_SIZE,
        bytesDone: FILES * FILE_SIZE,
      });
      await route.fulfill({ response: answer });
      await expect.poll(() => jobsPanel(page).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('on a 375 px phone in the dark theme the panel shows a running copy, reads well and cancels it', async () => {
    const { context, page } = await newPage(browser, { width: 375, height: 740, colorScheme: 'dark' });
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      // Started as the copy prompt starts it (the prompt itself at 375 px: accessibility.test.ts).
      const token = await (
        await fetch(`${server.url}/api/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(ADMIN),
        })
      ).text();
      const started = await fetch(`${server.url}/api/jobs`, {
        method: 'POST',
        headers: { 'X-Auth': token, 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'copy', items: ['/Big'], destination: '/Backup' }),
      });
      expect(started.status).toBe(202);
      await page.goto(`${server.url}/files/`);
      const panel = jobsPanel(page);
      await panel.getByText('0% · 0 B / 2.5 MiB').waitFor();
      await expect
        .poll(() => panel.boundingBox().then((box) => box && box.x + box.width))
        .toBeLessThanOrEqual(375);
      await expectNoAxeViolations(page, 'jobs panel, 375 px, dark');
      await screenshot(page, 'jobs-copy-progress-narrow-dark');
      await panel.getByRole('button', { name: 'Cancel Big' }).click();
      await panel.getByText('Cancelling…').waitFor();
      await fs.writeFile(gate, 'go\n');
      await expect.poll(() => jobsPanel(page).count()).toBe(0);
      expect(await fs.readdir(path.join(server.root, 'Backup'))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
