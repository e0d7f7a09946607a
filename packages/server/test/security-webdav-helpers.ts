import fs from 'node:fs/promises';
import path from 'node:path';
import type { TrashItem } from '@filebrowser/contract';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, expect } from 'vitest';
import type { StoredUser } from '../src/store/users.js';
import type { BuildOptions } from '../src/app.js';
import { PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * What the WebDAV security tests share: a files app started for each test, requests to /dav/, and
 * views of the disk.
 */

export let t: FilesApp;
export const HOST = 'dav.test';

export const basic = (user: string) => 'Basic ' + Buffer.from(`${user}:${PASSWORD}`).toString('base64');

export function dav(
  method: string,
  url: string,
  user: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: { host: HOST, authorization: basic(user), ...headers },
    ...(body !== undefined && { payload: body }),
  });
}

export const file = (...p: string[]) => path.join(t.root, ...p);
export const setUser = async (name: string, patch: Partial<StoredUser>) =>
  await t.ctx.store.users.update({ ...(await t.ctx.store.users.getByUsername(name))!, ...patch });
export const trashOf = async (token: string): Promise<TrashItem[]> => {
  const res = await t.get(token, '/api/trash');
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as TrashItem[];
};

/**
 * Every entry below `dir` with its kind and, for files, contents: what "nothing changed" compares.
 */
export async function snapshot(dir = t.root): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string, rel: string) => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        out[r] = 'folder';
        await walk(p, r);
      } else if (e.isSymbolicLink()) out[r] = `link -> ${await fs.readlink(p)}`;
      else out[r] = `file ${await fs.readFile(p, 'utf8')}`;
    }
  };
  await walk(dir, '');
  return out;
}

export async function tree(files: Record<string, string>, base = t.root): Promise<void> {
  for (const [p, content] of Object.entries(files)) {
    const full = path.join(base, p);
    await fs.mkdir(p.endsWith('/') ? full : path.dirname(full), { recursive: true });
    if (!p.endsWith('/')) await fs.writeFile(full, content);
  }
}

/** Starts the app before the tests of the file that calls it and closes it after. */
export function useDavApp(build: BuildOptions = {}): void {
  beforeEach(async () => {
    t = await startFilesApp({}, build);
  });
  afterEach(async () => {
    await t.close();
  });
}
