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
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('signing in and out', () => {
  it('logs in with the right password and lands on the file browser', async () => {
    const { context, page } = await newPage(browser);
    try {
      await page.goto(`${server.url}/login`);
      await page.getByRole('button', { name: 'Login', exact: true }).waitFor();
      expect(await page.title()).toBe('Login - File Browser');
      await screenshot(page, 'login-page');

      await login(page, server.url, ADMIN.username, ADMIN.password);
      expect(new URL(page.url()).pathname).toBe('/files/');
      // The loading splash is gone once the app has drawn itself.
      await page.locator('#loading').waitFor({ state: 'detached' });
      // File Browser's start-up object, for custom scripts, with every key of contract 14.
      const startupKeys = await page.evaluate(() =>
        Object.keys((window as unknown as { FileBrowser?: object }).FileBrowser ?? {}),
      );
      expect(startupKeys).toEqual(
        expect.arrayContaining([
          'AuthMethod',
          'BaseURL',
          'CSS',
          'Color',
          'DisableExternal',
          'DisableUsedPercentage',
          'EnableExec',
          'EnableThumbs',
          'HideLoginButton',
          'LoginPage',
          'LogoutPage',
          'Name',
          'NoAuth',
          'ReCaptcha',
          'ResizePreview',
          'Signup',
          'StaticURL',
          'Theme',
          'TusSettings',
          'Version',
        ]),
      );
      await page.getByRole('link', { name: 'Settings' }).waitFor();
      // The session lives where both transports find it: local storage and the auth cookie.
      const stored = await page.evaluate(() => localStorage.getItem('jwt'));
      expect(stored?.split('.')).toHaveLength(3);
      const cookies = await context.cookies(server.url);
      expect(cookies.find((c) => c.name === 'auth')?.value).toBe(stored);
      await screenshot(page, 'files-after-login');
    } finally {
      await context.close();
    }
  });

  it('shows the wrong-credentials message for a wrong password and stays on the login screen', async () => {
    const { context, page } = await newPage(browser);
    try {
      await page.goto(`${server.url}/login`);
      await page.getByLabel('Username').fill(ADMIN.username);
      await page.getByLabel('Password', { exact: true }).fill('not-the-admin-password');
      await page.getByRole('button', { name: 'Login', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toBe('Wrong credentials');
      expect(new URL(page.url()).pathname).toBe('/login');
      expect(await page.evaluate(() => localStorage.getItem('jwt'))).toBeNull();
      await screenshot(page, 'login-wrong-password');
    } finally {
      await context.close();
    }
  });

  it('goes back to the page that was asked for after signing in', async () => {
    const { context, page } = await newPage(browser);
    try {
      await page.goto(`${server.url}/settings/profile`);
      await page.waitForURL((url) => url.pathname === '/login');
      expect(new URL(page.url()).searchParams.get('redirect')).toBe('/settings/profile');
      await page.getByLabel('Username').fill(ADMIN.username);
      await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
      await page.getByRole('button', { name: 'Login', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/settings/profile');
      await page.getByRole('heading', { name: 'Profile settings' }).waitFor();
      expect(await page.title()).toBe('Profile settings - File Browser');
    } finally {
      await context.close();
    }
  });

  it('signs up a new account when signup is allowed, without admin rights, in its own home folder', async () => {
    const settings = server.ctx.store.settings.get();
    await server.ctx.store.settings.save({ ...settings, signup: true, createUserDir: true });
    const { context, page } = await newPage(browser);
    try {
      await page.goto(`${server.url}/login`);
      await page.getByRole('button', { name: "Don't have an account? Sign up" }).click();
      await page.getByLabel('Username').fill('newcomer');
      await page.getByLabel('Password', { exact: true }).fill('a-long-signup-password');
      await page.getByLabel('Password confirmation').fill('a-different-password');
      await page.getByRole('button', { name: 'Signup', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toBe("Passwords don't match");
      expect(await server.ctx.store.users.getByUsername('newcomer')).toBeUndefined();

      await page.getByLabel('Password confirmation').fill('a-long-signup-password');
      await screenshot(page, 'signup-form');
      await page.getByRole('button', { name: 'Signup', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/files/');
      await page.getByRole('link', { name: 'Settings' }).waitFor();

      const user = await server.ctx.store.users.getByUsername('newcomer');
      expect(user?.perm.admin).toBe(false);
      expect(user?.perm.execute).toBe(false);
      expect(user?.scope).toBe('/users/newcomer');
      expect((await fs.stat(path.join(server.root, 'users', 'newcomer'))).isDirectory()).toBe(true);
      // The new account is not an admin in the interface either.
      await page.goto(`${server.url}/settings/users`);
      await page.waitForURL((url) => url.pathname === '/403');
    } finally {
      await context.close();
      await server.ctx.store.settings.save(settings);
    }
  });

  it('a session the server ended sends the user to sign in, then back to the page they wanted', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'Profile settings' }).waitFor();
      // Ended elsewhere (e.g. a password change on another device): the next call answers 401.
      server.ctx.store.sessions.revokeUser(1);
      // Signing out ends with a full page load (nothing of the session stays in memory).
      const reloaded = page.waitForEvent('load');
      await page.getByRole('link', { name: 'Global settings' }).click();
      await reloaded;
      await page.waitForURL((url) => url.pathname === '/login');
      expect(new URL(page.url()).searchParams.get('redirect')).toBe('/settings/global');
      expect(await page.evaluate(() => localStorage.getItem('jwt'))).toBeNull();

      await page.getByLabel('Username').fill(ADMIN.username);
      await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
      await page.getByRole('button', { name: 'Login', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/settings/global');
      await page.getByLabel('Chunk size').waitFor();
    } finally {
      await context.close();
    }
  });

  it('logs out, and the Back button does not bring signed-in pages back', async () => {
    const { context, page } = await newPage(browser);
    try {
      await login(page, server.url, ADMIN.username, ADMIN.password);
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'Profile settings' }).waitFor();
      await page.getByRole('link', { name: 'Global settings' }).click();
      await page.getByRole('heading', { name: 'Global settings' }).waitFor();
      const token = await page.evaluate(() => localStorage.getItem('jwt'));

      const reloaded = page.waitForEvent('load');
      await page.getByRole('button', { name: 'Logout' }).click();
      await reloaded;
      await page.waitForURL((url) => url.pathname === '/login');
      await page.getByRole('button', { name: 'Login', exact: true }).waitFor();
      expect(await page.evaluate(() => localStorage.getItem('jwt'))).toBeNull();
      expect((await context.cookies(server.url)).find((c) => c.name === 'auth')).toBeUndefined();
      // The server ended the session too: the old token is worthless.
      const res = await fetch(`${server.url}/api/users/1`, { headers: { 'X-Auth': token ?? '' } });
      expect(res.status).toBe(401);

      // Every earlier entry (the profile page, then the file browser) now leads to the login screen.
      for (let i = 0; i < 2; i++) {
        await page.goBack();
        await page.waitForURL((url) => url.pathname === '/login');
        await page.getByRole('button', { name: 'Login', exact: true }).waitFor();
        expect(await page.getByRole('button', { name: 'Logout' }).count()).toBe(0);
        expect(await page.getByRole('heading', { name: 'Profile settings' }).count()).toBe(0);
      }
      await screenshot(page, 'after-logout-back');
    } finally {
      await context.close();
    }
  });
});
