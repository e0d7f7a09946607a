import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../packages/server/src/auth/accounts.js';
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

const toast = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text });

/** The page's background colour as the browser computed it (the theme's --bg). */
const background = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const LIGHT_BG = 'rgb(244, 246, 250)';
const DARK_BG = 'rgb(18, 20, 24)';

describe('user management', () => {
  it('an admin creates a user, who can sign in but cannot open the global settings', async () => {
    const admin = await newPage(browser);
    try {
      const page = admin.page;
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('link', { name: 'User management' }).click();
      await page.getByRole('heading', { name: 'User management' }).waitFor();
      expect(await page.title()).toBe('User management - File Browser');
      await page.getByRole('link', { name: 'New' }).click();
      await page.getByRole('heading', { name: 'New user' }).waitFor();

      await page.getByLabel('Username').fill('walter');
      await page.getByLabel('Password', { exact: true }).fill('short');
      await page.getByLabel('Your current password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Save' }).click();
      // The server's reason shows in an error toast that stays, with a way to report it.
      const error = page.getByRole('alert').filter({ hasText: 'password is too short' });
      await error.waitFor();
      expect(await error.textContent()).toContain(
        '400 Bad Request (password is too short, minimum length is 12)',
      );
      expect(await error.getByRole('link', { name: 'Report issue' }).count()).toBe(1);
      await screenshot(page, 'error-toast');
      await error.getByRole('button', { name: 'Dismiss' }).click();
      await error.waitFor({ state: 'detached' });

      await page.getByLabel('Password', { exact: true }).fill('walters-long-password');
      await page.getByRole('button', { name: 'Save' }).click();
      const created = toast(page, 'User created!');
      await created.waitFor();
      // Success toasts sit at the bottom centre of the window...
      const box = await created.boundingBox();
      const viewport = page.viewportSize()!;
      expect(Math.abs(box!.x + box!.width / 2 - viewport.width / 2)).toBeLessThan(2);
      expect(viewport.height - (box!.y + box!.height)).toBeLessThan(60);
      // ...and go away by themselves.
      await created.waitFor({ state: 'detached', timeout: 15_000 });
      await page.waitForURL((url) => /^\/settings\/users\/\d+$/.test(url.pathname));
      await screenshot(page, 'user-created');

      const walter = await server.ctx.store.users.getByUsername('walter');
      expect(walter?.perm.admin).toBe(false);
      await page.getByRole('link', { name: 'User management' }).click();
      await page.getByRole('cell', { name: 'walter', exact: true }).waitFor();
    } finally {
      await admin.context.close();
    }

    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, 'walter', 'walters-long-password');
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'Profile settings' }).waitFor();
      // No admin tabs for a user without the admin permission...
      expect(await page.getByRole('link', { name: 'Global settings' }).count()).toBe(0);
      // ...and typing the address leads to the forbidden page.
      await page.goto(`${server.url}/settings/global`);
      await page.waitForURL((url) => url.pathname === '/403');
      await page.getByRole('heading', { name: "You don't have permissions to access this." }).waitFor();
      expect(await page.title()).toBe('Forbidden - File Browser');
      await screenshot(page, 'forbidden-global-settings');
    } finally {
      await context.close();
    }
  });
});

describe('themes', () => {
  it('applies a theme chosen in the global settings at once, and the default follows the system', async () => {
    const { context, page } = await newPage(browser, { colorScheme: 'light' });
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await page.goto(`${server.url}/settings/global`);
      await page.getByRole('heading', { name: 'Global settings' }).waitFor();
      expect(await background(page)).toBe(LIGHT_BG);

      await page.getByLabel('Theme').selectOption('dark');
      await page.getByRole('button', { name: 'Save' }).click();
      await toast(page, 'Settings updated!').waitFor();
      // No reload: the theme applies as soon as the settings are saved.
      await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
      expect(await background(page)).toBe(DARK_BG);
      expect(server.ctx.store.settings.get().branding.theme).toBe('dark');
      await screenshot(page, 'theme-dark');

      // The choice holds on the next visit, whatever the system prefers.
      await page.reload();
      await page.getByRole('heading', { name: 'Global settings' }).waitFor();
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
      expect(await background(page)).toBe(DARK_BG);

      await page.getByLabel('Theme').selectOption('light');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await background(page)).toBe(LIGHT_BG);

      // The default theme follows the system's colour scheme.
      await page.getByLabel('Theme').selectOption('');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.waitForFunction(() => document.documentElement.dataset.theme === undefined);
      expect(await background(page)).toBe(DARK_BG);
      await page.emulateMedia({ colorScheme: 'light' });
      expect(await background(page)).toBe(LIGHT_BG);
    } finally {
      await context.close();
    }
  });
});

const germanCatalogue = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../packages/web/src/i18n/locales/de.json',
);

describe('languages', () => {
  it('switches the interface to the language chosen in the profile', async () => {
    // The German words come from the German catalogue itself, so rewording a translation does not
    // break this journey; the catalogue must exist for the interface to switch at all.
    if (!fs.existsSync(germanCatalogue)) {
      throw new Error('packages/web/src/i18n/locales/de.json is missing: there is no German to switch to');
    }
    const de = JSON.parse(fs.readFileSync(germanCatalogue, 'utf8')) as {
      settings: { profile: { title: string }; language: string };
    };
    await createAccount(server.ctx, { username: 'greta' }, 'gretas-long-password', 'cli');

    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, 'greta', 'gretas-long-password');
      await page.goto(`${server.url}/settings/profile`);
      await page.getByRole('heading', { name: 'Profile settings' }).waitFor();
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');

      await page.getByLabel('Language').selectOption('de');
      await page.getByRole('button', { name: 'Update' }).first().click();
      await page.waitForFunction(() => document.documentElement.lang === 'de');
      await page.getByRole('heading', { name: de.settings.profile.title, exact: true }).waitFor();
      await page.getByLabel(de.settings.language, { exact: true }).waitFor();
      expect(await page.getByRole('heading', { name: 'Profile settings' }).count()).toBe(0);
      expect((await server.ctx.store.users.getByUsername('greta'))?.locale).toBe('de');
      await screenshot(page, 'profile-in-german');

      // The language belongs to the account: it is there again after signing in anew.
      await page.reload();
      await page.waitForFunction(() => document.documentElement.lang === 'de');
      await page.getByRole('heading', { name: de.settings.profile.title, exact: true }).waitFor();
    } finally {
      await context.close();
    }
  });
});
