import fs from 'node:fs/promises';
import path from 'node:path';
import type { Permissions } from '@filebrowser/contract';
import { beforeEach, describe, expect, it } from 'vitest';
import { ALL, deny, startFilesApp } from './files-helpers.js';
import {
  useDavApp,
  t,
  setT,
  HOST,
  dav,
  file,
  read,
  exists,
  hrefs,
  PROPPATCH,
  LOCKINFO,
} from './webdav-helpers.js';

/**
 * The security catalogue through WebDAV: permissions one by one, rules, private paths, escapes in
 * the URL and in Destination, and symbolic links. Every refusal also checks that nothing changed
 * on disk.
 */
useDavApp();

describe('WebDAV permissions, one by one', () => {
  // Sharing needs download, so a user without download cannot share either.
  const without = (p: keyof Permissions): Permissions => ({
    ...ALL,
    [p]: false,
    ...(p === 'download' && { share: false }),
  });

  beforeEach(async () => {
    for (const p of ['create', 'modify', 'delete', 'rename', 'download'] as const) {
      await t.user(`no-${p}`, { scope: '/shared', perm: without(p) });
    }
    await fs.mkdir(file('shared', 'dir'), { recursive: true });
    await fs.writeFile(file('shared', 'f.txt'), 'original');
  });

  const lockNew = (user: string) => dav('LOCK', '/dav/locked-new.txt', { user, body: LOCKINFO });

  it('without create: no PUT of a new file, no MKCOL, no LOCK of an unmapped URL, no COPY', async () => {
    const u = 'no-create';
    expect((await dav('PUT', '/dav/new.txt', { user: u, body: 'x' })).statusCode).toBe(403);
    expect((await dav('MKCOL', '/dav/newdir', { user: u })).statusCode).toBe(403);
    expect((await lockNew(u)).statusCode).toBe(403);
    expect(
      (await dav('COPY', '/dav/f.txt', { user: u, headers: { destination: '/dav/g.txt' } })).statusCode,
    ).toBe(403);
    expect((await dav('PUT', '/dav/f.txt', { user: u, body: 'changed' })).statusCode).toBe(204);
    expect((await fs.readdir(file('shared'))).sort()).toEqual(['dir', 'f.txt']);
  });

  it('without modify: no PUT over a file, no PROPPATCH, no overwriting COPY', async () => {
    const u = 'no-modify';
    expect((await dav('PUT', '/dav/f.txt', { user: u, body: 'changed' })).statusCode).toBe(403);
    expect((await dav('PROPPATCH', '/dav/f.txt', { user: u, body: PROPPATCH('a', 'b') })).statusCode).toBe(
      403,
    );
    await fs.writeFile(file('shared', 'g.txt'), 'g');
    expect(
      (await dav('COPY', '/dav/f.txt', { user: u, headers: { destination: '/dav/g.txt' } })).statusCode,
    ).toBe(403);
    expect(await read('shared', 'f.txt')).toBe('original');
    expect(await read('shared', 'g.txt')).toBe('g');
    expect((await dav('PUT', '/dav/new.txt', { user: u, body: 'x' })).statusCode).toBe(201);
  });

  it('without delete: no DELETE', async () => {
    expect((await dav('DELETE', '/dav/f.txt', { user: 'no-delete' })).statusCode).toBe(403);
    expect((await dav('DELETE', '/dav/dir/', { user: 'no-delete' })).statusCode).toBe(403);
    expect(await exists('shared', 'f.txt')).toBe(true);
    expect(await exists('shared', 'dir')).toBe(true);
  });

  it('without rename: no MOVE', async () => {
    expect(
      (await dav('MOVE', '/dav/f.txt', { user: 'no-rename', headers: { destination: '/dav/g.txt' } }))
        .statusCode,
    ).toBe(403);
    expect(await exists('shared', 'f.txt')).toBe(true);
    expect(await exists('shared', 'g.txt')).toBe(false);
  });

  it('without download: no GET of bytes and no COPY, but listing still works', async () => {
    const u = 'no-download';
    expect((await dav('GET', '/dav/f.txt', { user: u })).statusCode).toBe(403);
    expect(
      (await dav('COPY', '/dav/f.txt', { user: u, headers: { destination: '/dav/g.txt' } })).statusCode,
    ).toBe(403);
    expect(await exists('shared', 'g.txt')).toBe(false);
    expect((await dav('PROPFIND', '/dav/', { user: u, headers: { depth: '1' } })).statusCode).toBe(207);
  });
});

describe('WebDAV rules, private paths, escapes and links', () => {
  beforeEach(async () => {
    await t.user('rob', { scope: '/rob', rules: [deny('/secret')] });
    await fs.mkdir(file('rob', 'secret'));
    await fs.writeFile(file('rob', 'secret', 'key.txt'), 'do not read');
    await fs.writeFile(file('rob', 'open.txt'), 'open');
    await fs.writeFile(path.join(t.outside, 'passwd'), 'outside the root');
  });

  it('hides and refuses what the rules deny, as a source and as a Destination', async () => {
    const list = await dav('PROPFIND', '/dav/', { user: 'rob', headers: { depth: '1' } });
    expect(hrefs(list.body)).toEqual(['/dav/', '/dav/open.txt']);
    expect((await dav('GET', '/dav/secret/key.txt', { user: 'rob' })).statusCode).toBe(403);
    expect((await dav('PROPFIND', '/dav/secret/', { user: 'rob', headers: { depth: '1' } })).statusCode).toBe(
      403,
    );
    expect((await dav('PUT', '/dav/secret/new.txt', { user: 'rob', body: 'x' })).statusCode).toBe(403);
    expect(
      (await dav('COPY', '/dav/secret/key.txt', { user: 'rob', headers: { destination: '/dav/out.txt' } }))
        .statusCode,
    ).toBe(403);
    expect(
      (await dav('MOVE', '/dav/open.txt', { user: 'rob', headers: { destination: '/dav/secret/open.txt' } }))
        .statusCode,
    ).toBe(403);
    expect((await dav('DELETE', '/dav/secret/', { user: 'rob' })).statusCode).toBe(403);
    expect(await fs.readdir(file('rob', 'secret'))).toEqual(['key.txt']);
    expect(await exists('rob', 'out.txt')).toBe(false);
    expect(await exists('rob', 'open.txt')).toBe(true);
  });

  it('never leaves the scope through dot segments or backslashes in the URL', async () => {
    for (const url of [
      '/dav/..%2F..%2Foutside/passwd',
      '/dav/%2e%2e/%2e%2e/outside/passwd',
      '/dav/a%5C..%5C..%5Cpasswd',
    ]) {
      const res = await dav('GET', url, { user: 'rob' });
      expect(res.statusCode, url).not.toBe(200);
      expect(res.body).not.toContain('outside the root');
      expect((await dav('PUT', url, { user: 'rob', body: 'planted' })).statusCode, url).not.toBe(201);
    }
    expect(await fs.readFile(path.join(t.outside, 'passwd'), 'utf8')).toBe('outside the root');
  });

  it('refuses a Destination on another host or outside /dav/ with 502, and dot segments in it', async () => {
    for (const destination of [
      'http://evil.example/dav/stolen.txt',
      `http://${HOST}/api/resources/stolen.txt`,
      `http://${HOST}/dav/../../stolen.txt`,
      'ftp://dav.test/dav/stolen.txt',
    ]) {
      for (const method of ['COPY', 'MOVE']) {
        const res = await dav(method, '/dav/open.txt', { user: 'rob', headers: { destination } });
        expect(res.statusCode, `${method} ${destination}`).toBe(502);
      }
    }
    const dots = await dav('COPY', '/dav/open.txt', {
      user: 'rob',
      headers: { destination: '/dav/%2e%2e/%2e%2e/stolen.txt' },
    });
    expect(dots.statusCode).toBe(400);
    expect(await fs.readdir(file('rob'))).toEqual(expect.arrayContaining(['open.txt', 'secret']));
    expect(await fs.readdir(t.root)).toEqual(['rob']);
    expect(await fs.readdir(t.outside)).toEqual(['passwd']);
  });

  it('does not follow a link out of the scope, for reading, writing, listing or as a Destination', async () => {
    await fs.symlink(t.outside, file('rob', 'escape'));
    await fs.symlink(path.join(t.outside, 'passwd'), file('rob', 'passwd-link'));
    const list = await dav('PROPFIND', '/dav/', { user: 'rob', headers: { depth: '1' } });
    expect(hrefs(list.body)).not.toContain('/dav/escape/');
    expect((await dav('GET', '/dav/passwd-link', { user: 'rob' })).statusCode).toBe(403);
    expect((await dav('GET', '/dav/escape/passwd', { user: 'rob' })).statusCode).toBe(403);
    expect((await dav('PROPFIND', '/dav/escape/', { user: 'rob', headers: { depth: '1' } })).statusCode).toBe(
      403,
    );
    expect((await dav('PUT', '/dav/escape/planted.txt', { user: 'rob', body: 'x' })).statusCode).toBe(403);
    expect((await dav('PUT', '/dav/passwd-link', { user: 'rob', body: 'x' })).statusCode).toBe(403);
    expect(
      (
        await dav('COPY', '/dav/open.txt', {
          user: 'rob',
          headers: { destination: '/dav/escape/copied.txt' },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await dav('MOVE', '/dav/open.txt', { user: 'rob', headers: { destination: '/dav/escape/moved.txt' } }))
        .statusCode,
    ).toBe(403);
    expect(await fs.readdir(t.outside)).toEqual(['passwd']);
    expect(await fs.readFile(path.join(t.outside, 'passwd'), 'utf8')).toBe('outside the root');
    // The link itself may go: DELETE removes the link, never its target.
    expect((await dav('DELETE', '/dav/escape', { user: 'rob' })).statusCode).toBe(204);
    expect(await fs.readdir(t.outside)).toEqual(['passwd']);
  });
});

describe('WebDAV private paths', () => {
  it('never lists or serves the database kept inside the served folder', async () => {
    await t.close();
    setT(
      await startFilesApp((base) => ({
        cacheDir: '',
        database: path.join(base, 'root', 'filebrowser.db'),
      })),
    );
    await t.user('whole', { scope: '/' });
    const list = await dav('PROPFIND', '/dav/', { user: 'whole', headers: { depth: '1' } });
    expect(list.statusCode).toBe(207);
    expect(list.body).not.toContain('filebrowser.db');
    for (const method of ['GET', 'PROPFIND', 'DELETE', 'PUT', 'LOCK']) {
      const res = await dav(method, '/dav/filebrowser.db', {
        user: 'whole',
        headers: { depth: '0' },
        ...(method === 'PUT' && { body: 'overwrite' }),
        ...(method === 'LOCK' && { body: LOCKINFO }),
      });
      expect(res.statusCode, method).toBe(403);
    }
    const move = await dav('MOVE', '/dav/x', {
      user: 'whole',
      headers: { destination: '/dav/filebrowser.db' },
    });
    expect([403, 404]).toContain(move.statusCode);
    expect((await fs.readFile(file('filebrowser.db'))).subarray(0, 15).toString()).toBe('SQLite format 3');
  });
});
