import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser, login, newPage, screenshot } from '../support/browser';
import { createAccount } from '../../packages/server/src/auth/accounts.js';
import { ADMIN, startServer, type RunningServer } from '../support/server';

/** Waits until `check` holds, polling (file system effects of an upload land a moment later). */
async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Lets the page's animations (a prompt fading in) end, so that a screenshot shows the result. */
const settled = (page: Page) =>
  page.evaluate(() => Promise.all(document.getAnimations().map((animation) => animation.finished)));

const read = (file: string) => fs.readFile(file, 'utf8');
const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );

/** Opens the upload prompt and picks `files` through the file chooser of its File or Folder button. */
async function pickThroughPrompt(
  page: Page,
  choice: 'File' | 'Folder',
  files: Parameters<Page['setInputFiles']>[1],
  shot?: string,
) {
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Upload' });
  await dialog.waitFor();
  if (shot) {
    await settled(page);
    await screenshot(page, shot);
  }
  const chooser = page.waitForEvent('filechooser');
  await dialog.getByRole('button', { name: choice, exact: true }).click();
  await (await chooser).setFiles(files);
}

describe('uploads', () => {
  let server: RunningServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let local: string;

  beforeAll(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  beforeEach(async () => {
    local = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-e2e-local-'));
    ({ context, page } = await newPage(browser));
  });
  afterEach(async () => {
    await context?.close();
    await fs.rm(local, { recursive: true, force: true });
  });

  it('uploads two files through the prompt; a clash asks, and replace overwrites', async () => {
    const dir = path.join(server.root, 'replace');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'notes.txt'), 'old notes');
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}/files/replace/`);
    await page.getByText('notes.txt').waitFor();

    await pickThroughPrompt(
      page,
      'File',
      [
        { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('new notes') },
        { name: 'fresh.txt', mimeType: 'text/plain', buffer: Buffer.from('fresh') },
      ],
      'upload-prompt',
    );
    const replace = page.getByRole('dialog', { name: 'Replace' });
    await replace.waitFor();
    // Only the clashing name is listed.
    await replace.getByText('notes.txt').waitFor();
    expect(await replace.getByText('fresh.txt').count()).toBe(0);
    await settled(page);
    await screenshot(page, 'upload-replace-prompt');
    await replace.getByRole('button', { name: 'Replace' }).click();

    await eventually(
      async () => (await read(path.join(dir, 'notes.txt'))) === 'new notes',
      'the replaced file',
    );
    await eventually(async () => (await read(path.join(dir, 'fresh.txt'))) === 'fresh', 'the new file');
    // The listing reloads when the batch is done.
    await page.getByText('fresh.txt').waitFor();
    expect(await fs.readdir(dir)).toEqual(['fresh.txt', 'notes.txt']);
  });

  it('keeps both: the upload goes under a free name and the existing file stays', async () => {
    const dir = path.join(server.root, 'keep');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'report.txt'), 'first');
    await fs.writeFile(path.join(dir, 'report(1).txt'), 'second');
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}/files/keep/`);
    await page.getByText('report(1).txt').waitFor();

    await pickThroughPrompt(page, 'File', [
      { name: 'report.txt', mimeType: 'text/plain', buffer: Buffer.from('third') },
    ]);
    await page.getByRole('dialog', { name: 'Replace' }).getByRole('button', { name: 'Keep both' }).click();

    await eventually(
      async () => (await read(path.join(dir, 'report(2).txt'))) === 'third',
      'the renamed upload',
    );
    expect(await read(path.join(dir, 'report.txt'))).toBe('first');
    expect(await read(path.join(dir, 'report(1).txt'))).toBe('second');
    await page.getByText('report(2).txt').waitFor();
  });

  it('uploads a folder through the prompt, merging into an existing folder', async () => {
    const tree = path.join(local, 'album');
    await fs.mkdir(path.join(tree, 'sub'), { recursive: true });
    await fs.writeFile(path.join(tree, 'a.txt'), 'A');
    await fs.writeFile(path.join(tree, 'sub', 'b.txt'), 'B');
    // An album folder exists already, with an unrelated file: adding to it asks nothing.
    await fs.mkdir(path.join(server.root, 'album'));
    await fs.writeFile(path.join(server.root, 'album', 'old.txt'), 'old');

    await login(page, server.url, ADMIN.username, ADMIN.password);
    await pickThroughPrompt(page, 'Folder', tree);
    await eventually(
      async () => (await read(path.join(server.root, 'album/sub/b.txt'))) === 'B',
      'the folder',
    );
    expect(await read(path.join(server.root, 'album/a.txt'))).toBe('A');
    expect(await read(path.join(server.root, 'album/old.txt'))).toBe('old');
    expect(await page.getByRole('dialog').count()).toBe(0);

    // The same folder again overwrites a.txt and sub/b.txt: now it asks; keep both makes a sibling.
    await fs.writeFile(path.join(tree, 'a.txt'), 'A2');
    await page.waitForFunction(() => !document.querySelector('.upload-panel'));
    await pickThroughPrompt(page, 'Folder', tree);
    const replace = page.getByRole('dialog', { name: 'Replace' });
    await replace.getByText('album', { exact: true }).waitFor();
    await replace.getByRole('button', { name: 'Keep both' }).click();
    // The files of a folder upload in parallel: wait for each of them.
    await eventually(
      async () =>
        (await read(path.join(server.root, 'album(1)/a.txt'))) === 'A2' &&
        (await read(path.join(server.root, 'album(1)/sub/b.txt'))) === 'B',
      'the copy',
    );
    expect(await read(path.join(server.root, 'album/a.txt'))).toBe('A');
  });

  it('uploads files dropped from the desktop onto the listing', async () => {
    await fs.mkdir(path.join(server.root, 'drop'));
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}/files/drop/`);
    await page.getByText('It feels lonely here...').waitFor();

    // What a drop from the file manager delivers: a DataTransfer with files.
    await page.evaluate(() => {
      const target = document.querySelector('.upload-drop');
      if (!target) throw new Error('no drop zone');
      const data = new DataTransfer();
      data.items.add(new File(['one'], 'one.txt', { type: 'text/plain' }));
      data.items.add(new File(['two'], 'two.md', { type: 'text/markdown' }));
      for (const type of ['dragenter', 'dragover', 'drop']) {
        target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data }));
      }
    });
    await eventually(
      async () => (await read(path.join(server.root, 'drop/two.md'))) === 'two',
      'the dropped files',
    );
    expect(await read(path.join(server.root, 'drop/one.txt'))).toBe('one');
    await page.getByText('one.txt').waitFor();
  });

  it('uploads a folder dropped from the desktop, with its empty subfolders', async () => {
    const tree = path.join(local, 'project');
    await fs.mkdir(path.join(tree, 'src'), { recursive: true });
    await fs.mkdir(path.join(tree, 'empty'));
    await fs.writeFile(path.join(tree, 'README'), 'readme');
    await fs.writeFile(path.join(tree, 'src', 'main.ts'), 'main');
    await fs.mkdir(path.join(server.root, 'dropdir'));
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}/files/dropdir/`);
    await page.getByText('It feels lonely here...').waitFor();

    // A real drag of a folder from outside the page, through the browser's input pipeline, so the
    // drop carries file system entries like one from a file manager does.
    const box = await page.locator('.upload-drop').boundingBox();
    if (!box) throw new Error('no drop zone');
    const cdp = await context.newCDPSession(page);
    const at = { x: box.x + box.width / 2, y: box.y + 20 };
    const data = { items: [], files: [tree], dragOperationsMask: 1 };
    await cdp.send('Input.dispatchDragEvent', { type: 'dragEnter', ...at, data });
    await cdp.send('Input.dispatchDragEvent', { type: 'dragOver', ...at, data });
    await cdp.send('Input.dispatchDragEvent', { type: 'drop', ...at, data });

    const dest = path.join(server.root, 'dropdir', 'project');
    await eventually(
      async () => (await read(path.join(dest, 'src/main.ts'))) === 'main',
      'the dropped folder',
    );
    expect(await read(path.join(dest, 'README'))).toBe('readme');
    expect((await fs.stat(path.join(dest, 'empty'))).isDirectory()).toBe(true);
  });

  it('tells why an upload failed, and offers nothing to users who may not create files', async () => {
    const perm = {
      admin: false,
      execute: false,
      create: true,
      rename: true,
      modify: false,
      delete: true,
      share: false,
      download: true,
    };
    const password = 'upload-e2e-Secret-42';
    await fs.mkdir(path.join(server.root, 'limited'));
    await fs.writeFile(path.join(server.root, 'limited', 'keep.txt'), 'kept');
    await createAccount(server.ctx, { username: 'nomodify', scope: '/limited', perm }, password, 'cli');
    await createAccount(
      server.ctx,
      { username: 'reader', scope: '/limited', perm: { ...perm, create: false } },
      password,
      'cli',
    );

    // Replacing needs the modify permission: the server refuses to create the upload.
    await login(page, server.url, 'nomodify', password);
    await page.getByText('keep.txt').waitFor();
    await pickThroughPrompt(page, 'File', [
      { name: 'keep.txt', mimeType: 'text/plain', buffer: Buffer.from('nope') },
    ]);
    await page.getByRole('dialog', { name: 'Replace' }).getByRole('button', { name: 'Replace' }).click();
    await page.getByText(/^Failed to create an upload: 403 Forbidden/).waitFor();
    expect(await read(path.join(server.root, 'limited', 'keep.txt'))).toBe('kept');
    await page.waitForFunction(() => !document.querySelector('.upload-panel'));

    // Without the create permission there is no upload button, and a drop does nothing.
    await context.clearCookies();
    await page.evaluate(() => localStorage.clear());
    await login(page, server.url, 'reader', password);
    await page.getByText('keep.txt').waitFor();
    expect(await page.getByRole('button', { name: 'Upload', exact: true }).count()).toBe(0);
    const taken = await page.evaluate(() => {
      const target = document.querySelector('.upload-drop') ?? document.querySelector('.files');
      if (!target) throw new Error('no listing');
      const data = new DataTransfer();
      data.items.add(new File(['x'], 'sneaky.txt'));
      // A handled drop is cancelled (so that the browser does not open the file).
      return !target.dispatchEvent(
        new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: data }),
      );
    });
    expect(taken).toBe(false);
  });

  it('shows the progress panel, collapses it, and aborts after confirming', async () => {
    await login(page, server.url, ADMIN.username, ADMIN.password);
    await page.goto(`${server.url}/files/`);
    // A slow link, so that the upload is still running while the panel is looked at.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 256 * 1024,
    });
    const big = path.join(local, 'slow.bin');
    await fs.writeFile(big, Buffer.alloc(8 * 1024 * 1024, 7));

    await pickThroughPrompt(page, 'File', big);
    const panel = page.getByRole('region', { name: 'Uploads' });
    await panel.getByRole('heading', { name: 'Uploading 1 file' }).waitFor();
    await panel.getByText(/^\d+%$/).waitFor();
    await panel.getByText(/ of 8 MiB$/).waitFor();
    await panel.getByText(/^\d+\.\d\d MB\/s$/).waitFor();
    await panel.getByText(/^(\d\d:\d\d:\d\d|--:--:--)$/).waitFor();
    await panel.getByRole('progressbar', { name: 'slow.bin' }).waitFor();
    await page.getByRole('progressbar', { name: 'Upload progress' }).waitFor();
    // The speed and the time left become known after a second of sending.
    await panel.getByText(/^\d\d:\d\d:\d\d$/).waitFor();
    await screenshot(page, 'upload-progress-panel');

    await panel.getByRole('button', { name: 'Hide the files' }).click();
    expect(await panel.getByRole('progressbar', { name: 'slow.bin' }).count()).toBe(0);
    await panel.getByRole('button', { name: 'Show the files' }).click();
    await panel.getByRole('progressbar', { name: 'slow.bin' }).waitFor();

    // Leaving the page now would ask first.
    const leaving = await page.evaluate(() => {
      const event = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(event);
      return event.defaultPrevented;
    });
    expect(leaving).toBe(true);

    await panel.getByRole('button', { name: 'Abort the upload' }).click();
    const confirm = page.getByRole('dialog', { name: 'Abort upload' });
    await confirm.getByText('Are you sure you wish to abort the upload?', { exact: false }).waitFor();
    await confirm.getByRole('button', { name: 'Abort' }).click();
    await panel.waitFor({ state: 'detached' });
    expect(await page.getByRole('progressbar', { name: 'Upload progress' }).count()).toBe(0);
    // The cancelled upload leaves nothing behind: no file, no staging file.
    const staging = path.join(path.dirname(server.root), 'uploads');
    await eventually(async () => (await fs.readdir(staging)).length === 0, 'the staging file to go');
    expect(await exists(path.join(server.root, 'slow.bin'))).toBe(false);
  });
});
