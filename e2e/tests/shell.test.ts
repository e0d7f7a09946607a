import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../packages/server/src/auth/accounts.js';
import { launchBrowser, login, newPage, screenshot } from '../support/browser.js';
import { startServer, type RunningServer } from '../support/server.js';

const BOB = { username: 'bob', password: 'shell-journey-password' };
const PERMISSIONS = {
  admin: false,
  execute: true,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};

describe('shell panel', () => {
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startServer({ disableExec: false });
    await createAccount(
      server.ctx,
      {
        username: BOB.username,
        scope: '/bob',
        perm: PERMISSIONS,
        commands: ['ls', 'echo'],
      },
      BOB.password,
      'cli',
    );
    await fs.mkdir(path.join(server.root, 'bob', 'docs'), { recursive: true });
    await fs.writeFile(path.join(server.root, 'bob', 'docs', 'report-2025.txt'), 'numbers\n');
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('runs allowed commands in the folder on screen, with history, clear and exit', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, BOB.username, BOB.password);
      await page.goto(`${server.url}/files/docs/`);
      await page.getByRole('link', { name: /report-2025\.txt/ }).waitFor();

      await page.getByRole('button', { name: 'Shell', exact: true }).click();
      const shell = page.getByRole('region', { name: 'Shell' });
      const input = shell.getByRole('textbox', { name: 'Command' });
      await expect(input.evaluate((el) => el === document.activeElement)).resolves.toBe(true);

      // ls runs in the folder on screen (/docs/), not at the scope root.
      await input.fill('ls');
      await input.press('Enter');
      await shell.locator('.shell__output', { hasText: 'report-2025.txt' }).waitFor();

      // No shell: the metacharacters are printed, nothing else runs.
      await input.fill('echo "hello shell" ; ls $HOME');
      await input.press('Enter');
      await shell.locator('.shell__output', { hasText: 'hello shell ; ls $HOME' }).waitFor();

      // A command that is not on bob's list is refused with the server's words.
      await input.fill('cat report-2025.txt');
      await input.press('Enter');
      await shell.getByText('Command not allowed.').waitFor();
      await screenshot(page, 'shell-panel');

      await input.press('ArrowUp');
      expect(await input.inputValue()).toBe('cat report-2025.txt');
      await input.press('ArrowUp');
      expect(await input.inputValue()).toBe('echo "hello shell" ; ls $HOME');
      await input.press('ArrowUp');
      expect(await input.inputValue()).toBe('ls');
      await input.press('ArrowDown');
      await input.press('Enter');
      await expect
        .poll(() => shell.locator('.shell__output', { hasText: 'hello shell ; ls $HOME' }).count())
        .toBe(2);

      await input.fill('clear');
      await input.press('Enter');
      await shell.locator('.shell__entry').first().waitFor({ state: 'detached' });
      await expect(shell.locator('.shell__output').count()).resolves.toBe(0);

      await input.fill('exit');
      await input.press('Enter');
      await shell.waitFor({ state: 'detached' });

      // Opening it again keeps the history.
      await page.getByRole('button', { name: 'Shell', exact: true }).click();
      await input.press('ArrowUp');
      expect(await input.inputValue()).toBe('echo "hello shell" ; ls $HOME');
    } finally {
      await context.close();
    }
  });

  it('resizes by dragging the divider, within the window', async () => {
    const { context, page } = await newPage(browser, { height: 800 });
    try {
      await login(page, server.url, BOB.username, BOB.password);
      await page.getByRole('button', { name: 'Shell', exact: true }).click();
      const shell = page.getByRole('region', { name: 'Shell' });
      const divider = shell.getByRole('separator', { name: 'Resize the shell' });
      const before = (await shell.boundingBox())!;
      const fontSize = await shell.evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
      expect(Math.round(before.height)).toBe(Math.round(25 * fontSize));

      const grip = (await divider.boundingBox())!;
      await page.mouse.move(grip.x + 20, grip.y + 2);
      await page.mouse.down();
      await page.mouse.move(grip.x + 20, 300, { steps: 5 });
      await page.mouse.up();
      // Moves are throttled: wait for the last one, so the next drag grabs the divider where it ends.
      await expect.poll(async () => Math.abs((await divider.boundingBox())!.y - 298)).toBeLessThan(12);
      expect((await shell.boundingBox())!.height).toBeGreaterThan(before.height);

      // Dragged to the very top, it stops 4em below the top of the window.
      const moved = (await divider.boundingBox())!;
      await page.mouse.move(moved.x + 20, moved.y + moved.height / 2);
      await page.mouse.down();
      await page.mouse.move(moved.x + 20, 0, { steps: 5 });
      await page.mouse.up();
      await expect
        .poll(async () => Math.round((await shell.boundingBox())!.y))
        .toBe(Math.round(4 * fontSize));
    } finally {
      await context.close();
    }
  });

  it('offers no shell to a user without the execute permission', async () => {
    const { context, page } = await newPage(browser);
    try {
      await createAccount(
        server.ctx,
        { username: 'carol', scope: '/carol', perm: { ...PERMISSIONS, execute: false }, commands: ['ls'] },
        BOB.password,
        'cli',
      );
      await login(page, server.url, 'carol', BOB.password);
      await page.locator('.files').waitFor();
      await expect(page.getByRole('button', { name: 'Shell', exact: true }).count()).resolves.toBe(0);
    } finally {
      await context.close();
    }
  });
});
