import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFilesApp, type FilesApp } from './files-helpers.js';

/*
 * Class: share links that survive the delete of their item, or die with someone else's
 * (File Browser's GHSA-pp88-jhwj-5qh5: a delete spelled `/a/` left the `/a` link, which then
 * exposed a new `/a`; GHSA-5ww9-jg6q-38r7: a delete removed links by a bare path prefix, other
 * users' links to other items included).
 */

let t: FilesApp;
let bob: string;
let eve: string;

beforeEach(async () => {
  t = await startFilesApp();
  bob = await t.user('bob');
  eve = await t.user('eve', { scope: '/bob' });
  for (const dir of ['a', 'ab']) {
    await fs.mkdir(path.join(t.root, 'bob', dir));
    await fs.writeFile(path.join(t.root, 'bob', dir, 'f.txt'), dir);
  }
});
afterEach(() => t.close());

async function share(token: string, p: string): Promise<string> {
  const res = await t.req(token, { method: 'POST', url: `/api/share${p}`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { hash: string }).hash;
}

const publicFile = (hash: string) => t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}/f.txt` });

describe('deleting a shared folder', () => {
  it('spelled with a trailing slash kills the link, and a folder made again under its name is not served', async () => {
    const hash = await share(bob, '/a');
    const slashHash = await share(bob, '/a/');
    const res = await t.req(bob, { method: 'DELETE', url: '/api/resources/a/' });
    expect(res.statusCode).toBe(204);
    await fs.mkdir(path.join(t.root, 'bob', 'a'));
    await fs.writeFile(path.join(t.root, 'bob', 'a', 'f.txt'), 'NEW');
    for (const h of [hash, slashHash]) {
      expect((await publicFile(h)).statusCode).toBe(404);
      expect(await t.ctx.store.shares.get(h)).toBeUndefined();
    }
  });

  it('leaves links to a sibling whose name merely starts the same, whoever owns them', async () => {
    const bobs = await share(bob, '/ab');
    const eves = await share(eve, '/ab/');
    expect((await t.req(bob, { method: 'DELETE', url: '/api/resources/a' })).statusCode).toBe(204);
    for (const h of [bobs, eves]) {
      const res = await publicFile(h);
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('ab');
    }
  });
});
