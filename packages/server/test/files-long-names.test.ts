import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFilesApp, type FilesApp } from './files-helpers.js';

/** Found by the resolver fuzz: a name longer than the file system allows failed with 500. */
let t: FilesApp;
let bob: string;

beforeEach(async () => {
  t = await startFilesApp();
  bob = await t.user('bob');
});
afterEach(async () => {
  await t.close();
});

const TOO_LONG = 'L'.repeat(256);

describe('a name longer than the file system allows', () => {
  it('answers 400 wherever a path is read or written, and creates nothing', async () => {
    for (const url of [
      `/api/resources/${TOO_LONG}`,
      `/api/raw/${TOO_LONG}`,
      `/api/resources/${TOO_LONG}/x`,
    ]) {
      const res = await t.get(bob, url);
      expect(res.statusCode, url).toBe(400);
    }
    const create = await t.req(bob, { method: 'POST', url: `/api/resources/${TOO_LONG}`, payload: 'x' });
    expect(create.statusCode).toBe(400);
    expect(await fs.readdir(path.join(t.root, 'bob'))).toEqual([]);
    // The longest name allowed works as usual.
    const longest = 'L'.repeat(255);
    expect(
      (await t.req(bob, { method: 'POST', url: `/api/resources/${longest}`, payload: 'x' })).statusCode,
    ).toBe(200);
    expect((await t.get(bob, `/api/raw/${longest}`)).body).toBe('x');
  });
});
