import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { stagingName } from '../src/files/access/staging-names.js';
import { openStore } from '../src/store/index.js';
import { PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * The staging files of writes in progress are in nobody's view, and
 * those a process left when it died mid-write are removed when the next one starts. The
 * SIGKILL of a real server process in the middle of each kind of write is in e2e/tests/crash.test.ts.
 */
let t: FilesApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('a staging file', () => {
  it('never shows: not in listings, recursive listings, search, archives or copies, and cannot be fetched', async () => {
    t = await startFilesApp();
    const bob = await t.user('bob');
    const home = path.join(t.root, 'bob');
    await fs.mkdir(path.join(home, 'docs'));
    await fs.writeFile(path.join(home, 'docs/report.txt'), 'the report');
    await fs.writeFile(path.join(home, 'docs/.env'), 'a dotfile of the user');
    const staging = stagingName('report.txt');
    await fs.writeFile(path.join(home, 'docs', staging), 'half a report');

    const listing = await t.get(bob, '/api/resources/docs/');
    expect(listing.statusCode).toBe(200);
    const names = (listing.json() as { items: { name: string }[] }).items.map((i) => i.name).sort();
    expect(names).toEqual(['.env', 'report.txt']);

    const recursive = await t.get(bob, '/api/resources/recursive/docs');
    expect(recursive.statusCode).toBe(200);
    expect(recursive.body).toContain('report.txt');
    expect(recursive.body).not.toContain(staging);

    const search = await t.get(bob, '/api/search/?query=report');
    expect(search.statusCode).toBe(200);
    expect(search.body).toContain('report.txt');
    expect(search.body).not.toContain('.fb-');

    const archive = await t.get(bob, '/api/raw/docs?algo=tar');
    expect(archive.statusCode).toBe(200);
    expect(archive.rawPayload.includes(Buffer.from('report.txt'))).toBe(true);
    expect(archive.rawPayload.includes(Buffer.from(staging))).toBe(false);

    for (const url of [`/api/raw/docs/${staging}`, `/api/resources/docs/${staging}`]) {
      const res = await t.get(bob, url);
      expect(res.statusCode, url).toBeGreaterThanOrEqual(403);
      expect(res.statusCode, url).toBeLessThanOrEqual(404);
      expect(res.body, url).not.toContain('half a report');
    }

    const copy = await t.req(bob, {
      method: 'PATCH',
      url: '/api/resources/docs?action=copy&destination=%2Fcopy',
    });
    expect(copy.statusCode).toBe(200);
    expect((await fs.readdir(path.join(home, 'copy'))).sort()).toEqual(['.env', 'report.txt']);
  });

  it('named folder hides what is inside it too: nothing below it is read, written or listed by path', async () => {
    t = await startFilesApp();
    const bob = await t.user('bob');
    const home = path.join(t.root, 'bob');
    const staging = stagingName('docs');
    await fs.mkdir(path.join(home, staging, 'inner'), { recursive: true });
    await fs.writeFile(path.join(home, staging, 'inner.txt'), 'inside a staging folder');
    const before = await fs.readdir(path.join(home, staging));

    for (const [method, url, payload] of [
      ['GET', `/api/resources/${staging}/inner.txt`],
      ['GET', `/api/raw/${staging}/inner.txt`],
      ['GET', `/api/resources/${staging}/inner/`],
      ['POST', `/api/resources/${staging}/new.txt`, 'new'],
      ['PUT', `/api/resources/${staging}/inner.txt`, 'changed'],
    ] as const) {
      const res = await t.req(bob, { method, url, ...(payload !== undefined && { payload }) });
      expect(res.statusCode, `${method} ${url}`).toBeGreaterThanOrEqual(403);
      expect(res.statusCode, `${method} ${url}`).toBeLessThanOrEqual(404);
      expect(res.body).not.toContain('inside a staging folder');
    }
    const dav = await t.app.inject({
      method: 'PUT',
      url: `/dav/${staging}/dav.txt`,
      headers: { authorization: 'Basic ' + Buffer.from(`bob:${PASSWORD}`).toString('base64') },
      payload: 'dav',
    });
    expect([403, 404, 409]).toContain(dav.statusCode);
    expect(await fs.readdir(path.join(home, staging))).toEqual(before);
    expect(await fs.readFile(path.join(home, staging, 'inner.txt'), 'utf8')).toBe('inside a staging folder');
  });

  it('left by a write that never finished is removed at the next start, and only by its exact record', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const home = await fs.realpath(path.join(t.root, 'bob'));
    const left = stagingName('big.bin');
    await fs.writeFile(path.join(home, left), 'half of it');
    // A file with a staging-like name and no record, and a record leading through a link: kept.
    const unrecorded = stagingName('mine.txt');
    await fs.writeFile(path.join(home, unrecorded), 'not ours to remove');
    await fs.mkdir(path.join(t.outside, 'target'));
    const outsideFile = stagingName('x');
    await fs.writeFile(path.join(t.outside, 'target', outsideFile), 'outside the root');
    await fs.symlink(path.join(t.outside, 'target'), path.join(home, 'link'));

    // What a process killed in the middle of the write leaves in the database.
    await t.ctx.store.staging.add(home, left);
    await t.ctx.store.staging.add(path.join(home, 'link'), outsideFile);
    await t.ctx.store.staging.add(home, stagingName('gone.txt'));
    expect(await t.ctx.store.staging.orphaned([])).toHaveLength(3);

    // The next start over the same database.
    const store = await openStore(t.ctx.config.database);
    const { app } = await buildApp(t.ctx.config, store);
    try {
      await app.ready();
      expect((await fs.readdir(home)).sort()).toEqual(['link', unrecorded].sort());
      expect(await fs.readFile(path.join(t.outside, 'target', outsideFile), 'utf8')).toBe('outside the root');
      expect(await store.staging.orphaned([])).toEqual([]);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('of a successful or failed write leaves no record behind', async () => {
    t = await startFilesApp();
    const bob = await t.user('bob');
    const put = await t.req(bob, { method: 'POST', url: '/api/resources/a.txt', payload: 'text' });
    expect(put.statusCode).toBe(200);
    const clash = await t.req(bob, { method: 'POST', url: '/api/resources/a.txt/b.txt', payload: 'x' });
    expect(clash.statusCode).toBeGreaterThanOrEqual(400);
    const copy = await t.req(bob, {
      method: 'PATCH',
      url: '/api/resources/a.txt?action=copy&destination=%2Fb.txt',
    });
    expect(copy.statusCode).toBe(200);
    expect(await t.ctx.store.staging.orphaned([])).toEqual([]);
  });
});
