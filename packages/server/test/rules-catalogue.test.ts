import fs from 'node:fs/promises';
import path from 'node:path';
import type { FileInfo, Rule } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deny, denyRe, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * Rules, end to end: what a rule hides stays hidden in every way a user or a
 * share holder can look, whether the name is written composed (NFC) or decomposed (NFD) in the
 * rule or on disk, on segment boundaries, recursively, and with allow rules reopening a part.
 */
let t: FilesApp;

const NFC = 'Caf\u00e9';
const NFD = 'Cafe\u0301';
const allow = (p: string): Rule => ({ regex: false, allow: true, path: p, regexp: null });

beforeEach(async () => {
  t = await startFilesApp();
});
afterEach(async () => {
  await t.close();
});

const names = async (token: string, url: string): Promise<string[]> => {
  const res = await t.get(token, url);
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return ((JSON.parse(res.body) as FileInfo).items ?? []).map((i) => i.name).sort();
};

const searchPaths = async (token: string, url: string): Promise<string[]> => {
  const res = await t.get(token, url);
  expect(res.statusCode).toBe(200);
  return res.body
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { path: string }).path)
    .sort();
};

const pub = (url: string) => t.app.inject({ method: 'GET', url });

async function share(token: string, p: string): Promise<string> {
  const res = await t.req(token, { method: 'POST', url: `/api/share${p}`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { hash: string }).hash;
}

/** Writes `files` (relative path → content) below `dir`, making folders as needed. */
async function tree(dir: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), content);
  }
}

const url = (p: string) => p.split('/').map(encodeURIComponent).join('/');

describe.each([
  { rule: 'NFC', ruleName: NFC, disk: 'NFD', diskName: NFD },
  { rule: 'NFD', ruleName: NFD, disk: 'NFC', diskName: NFC },
])('a rule written in $rule on a folder stored in $disk', ({ ruleName, diskName }) => {
  it('hides it in listings, downloads, search, archives and a public share of its parent', async () => {
    const bob = await t.user('bob', { rules: [deny(`/docs/${ruleName}`)] });
    const home = path.join(t.root, 'bob');
    await tree(home, {
      [`docs/${diskName}/secret.txt`]: 'SECRET-CAFE',
      [`docs/${diskName}/deep/more-secret.txt`]: 'SECRET-DEEP',
      'docs/open.txt': 'open',
    });
    expect((await fs.readdir(path.join(home, 'docs'))).sort()).toEqual([diskName, 'open.txt']);

    expect(await names(bob, '/api/resources/docs/')).toEqual(['open.txt']);
    for (const name of [diskName, ruleName]) {
      for (const p of [`/docs/${name}/secret.txt`, `/docs/${name}/`, `/docs/${name}/deep/more-secret.txt`]) {
        for (const api of ['/api/raw', '/api/resources']) {
          const res = await t.get(bob, api + url(p));
          expect(res.statusCode, api + p).toBe(403);
          expect(res.body).not.toContain('SECRET');
        }
      }
    }
    expect(await searchPaths(bob, '/api/search/?query=secret')).toEqual([]);
    expect(await searchPaths(bob, '/api/search/docs?query=caf')).toEqual([]);
    expect(await searchPaths(bob, '/api/search/?query=open')).toEqual(['docs/open.txt']);

    const archive = await t.get(bob, '/api/raw/docs?algo=tar');
    expect(archive.statusCode).toBe(200);
    expect(archive.rawPayload.includes(Buffer.from('open'))).toBe(true);
    expect(archive.rawPayload.includes(Buffer.from('SECRET'))).toBe(false);
    const picked = await t.get(bob, `/api/raw/docs/?files=${encodeURIComponent(`/${diskName}`)}&algo=tar`);
    expect(picked.rawPayload.includes(Buffer.from('SECRET'))).toBe(false);

    const hash = await share(bob, '/docs/');
    const listing = (await pub(`/api/public/share/${hash}`)).json() as FileInfo;
    expect(listing.items!.map((i) => i.name)).toEqual(['open.txt']);
    for (const name of [diskName, ruleName]) {
      const dl = await pub(`/api/public/dl/${hash}/${url(name)}/secret.txt`);
      expect([403, 404]).toContain(dl.statusCode);
      expect(dl.body).not.toContain('SECRET');
      const sub = await pub(`/api/public/share/${hash}/${url(name)}/`);
      expect([403, 404]).toContain(sub.statusCode);
    }
    const shareTar = await pub(`/api/public/dl/${hash}?algo=tar`);
    expect(shareTar.statusCode).toBe(200);
    expect(shareTar.rawPayload.includes(Buffer.from('open'))).toBe(true);
    expect(shareTar.rawPayload.includes(Buffer.from('SECRET'))).toBe(false);
    // Nor can the hidden folder be shared on its own.
    const direct = await t.req(bob, {
      method: 'POST',
      url: `/api/share${url(`/docs/${diskName}`)}`,
      payload: {},
    });
    expect(direct.statusCode).toBe(403);
  });

  it('is hidden by a regex rule and reopened by an allow rule in the other form', async () => {
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), rules: [denyRe(`/${ruleName}/`)] });
    const home = path.join(t.root, 'bob');
    await tree(home, { [`${diskName}/x.txt`]: 'SECRET-X', [`${diskName}/pub/y.txt`]: 'open-y' });
    const bob = await t.user('bob', { rules: [allow(`/${ruleName}/pub`)] });
    expect((await t.get(bob, `/api/raw${url(`/${diskName}/x.txt`)}`)).statusCode).toBe(403);
    expect((await t.get(bob, `/api/raw${url(`/${diskName}/pub/y.txt`)}`)).body).toBe('open-y');
    expect(await names(bob, `/api/resources${url(`/${diskName}/`)}`)).toEqual(['pub']);
    expect(await searchPaths(bob, '/api/search/?query=.txt')).toEqual([`${diskName}/pub/y.txt`]);
  });
});

describe('path rules', () => {
  it('match whole segments only: /a hides /a, never /ab or /a.txt', async () => {
    const bob = await t.user('bob', { rules: [deny('/a')] });
    await tree(path.join(t.root, 'bob'), {
      'a/in.txt': 'SECRET-A',
      'ab/in.txt': 'ab',
      'a.txt': 'a-file',
      'x/a/in.txt': 'deeper a',
    });
    expect(await names(bob, '/api/resources/')).toEqual(['a.txt', 'ab', 'x']);
    expect((await t.get(bob, '/api/raw/a/in.txt')).statusCode).toBe(403);
    expect((await t.get(bob, '/api/raw/ab/in.txt')).body).toBe('ab');
    expect((await t.get(bob, '/api/raw/a.txt')).body).toBe('a-file');
    // Rule paths are anchored at the scope: /x/a is another folder.
    expect((await t.get(bob, '/api/raw/x/a/in.txt')).body).toBe('deeper a');
    expect(await searchPaths(bob, '/api/search/?query=in.txt')).toEqual(['ab/in.txt', 'x/a/in.txt']);
  });

  it('hide everything below the folder they name, at any depth, in every view', async () => {
    const bob = await t.user('bob', { rules: [deny('/a')] });
    await tree(path.join(t.root, 'bob'), { 'a/b/c/deep.txt': 'SECRET-DEEP', 'keep.txt': 'keep' });
    for (const p of ['/a/b', '/a/b/c', '/a/b/c/deep.txt']) {
      expect((await t.get(bob, `/api/resources${p}`)).statusCode, p).toBe(403);
      expect((await t.get(bob, `/api/raw${p}`)).statusCode, p).toBe(403);
    }
    expect(await searchPaths(bob, '/api/search/?query=deep')).toEqual([]);
    const whole = await t.get(bob, '/api/raw/?algo=tar');
    expect(whole.rawPayload.includes(Buffer.from('SECRET'))).toBe(false);
    expect(whole.rawPayload.includes(Buffer.from('keep'))).toBe(true);
    // A link elsewhere in the scope does not lead around the rule.
    await fs.symlink('a/b', path.join(t.root, 'bob', 'shortcut'));
    expect((await t.get(bob, '/api/raw/shortcut/c/deep.txt')).statusCode).toBe(403);
    const hash = await share(bob, '/');
    expect((await pub(`/api/public/dl/${hash}/a/b/c/deep.txt`)).body).not.toContain('SECRET');
    expect((await pub(`/api/public/dl/${hash}/shortcut/c/deep.txt`)).body).not.toContain('SECRET');
  });

  it('are reopened by a later allow rule, and the user rules come after the global ones', async () => {
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), rules: [deny('/team')] });
    const bob = await t.user('bob', { rules: [allow('/team/public')] });
    await tree(path.join(t.root, 'bob'), { 'team/public/p.txt': 'public', 'team/secret.txt': 'SECRET' });
    // The denied folder itself stays closed (as in File Browser); the reopened part is reachable.
    expect((await t.get(bob, '/api/resources/team/')).statusCode).toBe(403);
    expect(await names(bob, '/api/resources/team/public/')).toEqual(['p.txt']);
    expect((await t.get(bob, '/api/raw/team/public/p.txt')).body).toBe('public');
    expect((await t.get(bob, '/api/raw/team/secret.txt')).statusCode).toBe(403);
    const hash = await share(bob, '/team/public/');
    expect((await pub(`/api/public/dl/${hash}/p.txt`)).body).toBe('public');
  });

  it('hide by regex anywhere in the path', async () => {
    const bob = await t.user('bob', { rules: [denyRe('\\.key$')] });
    await tree(path.join(t.root, 'bob'), {
      'id.key': 'SECRET-1',
      'deep/er/id.key': 'SECRET-2',
      'id.key.txt': 'ok',
    });
    expect(await names(bob, '/api/resources/')).toEqual(['deep', 'id.key.txt']);
    expect((await t.get(bob, '/api/raw/deep/er/id.key')).statusCode).toBe(403);
    expect(await searchPaths(bob, '/api/search/?query=id')).toEqual(['id.key.txt']);
    const tar = await t.get(bob, '/api/raw/?algo=tar');
    expect(tar.rawPayload.includes(Buffer.from('SECRET'))).toBe(false);
  });

  it('still apply to a share made before the rule: the hidden part answers 403/404', async () => {
    const bob = await t.user('bob');
    await tree(path.join(t.root, 'bob'), { 'docs/later/s.txt': 'SECRET', 'docs/o.txt': 'o' });
    const whole = await share(bob, '/docs/');
    const part = await share(bob, '/docs/later/');
    expect((await pub(`/api/public/dl/${whole}/later/s.txt`)).body).toBe('SECRET');
    const u = (await t.ctx.store.users.getByUsername('bob'))!;
    u.rules = [deny('/docs/later')];
    await t.ctx.store.users.update(u);
    const viaWhole = await pub(`/api/public/dl/${whole}/later/s.txt`);
    expect([403, 404]).toContain(viaWhole.statusCode);
    expect(viaWhole.body).not.toContain('SECRET');
    const viaPart = await pub(`/api/public/dl/${part}/s.txt`);
    expect([403, 404]).toContain(viaPart.statusCode);
    expect(viaPart.body).not.toContain('SECRET');
    expect((await pub(`/api/public/share/${whole}`)).json().items.map((i: FileInfo) => i.name)).toEqual([
      'o.txt',
    ]);
  });
});
