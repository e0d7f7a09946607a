import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Permissions } from '@filebrowser/contract';
import { beforeEach, describe, expect, it } from 'vitest';
import { XML_BOUNDS, xmlStats, type XmlMethod } from '../src/http/dav/xml.js';
import { ALL } from './files-helpers.js';
import {
  useDavApp,
  t,
  HOST,
  basic,
  dav,
  file,
  setUser,
  trashOf,
  snapshot,
  tree,
} from './security-webdav-helpers.js';

/**
 * WebDAV cannot destroy or hoard: what an overwrite replaces goes through the one delete, a
 * destination never holds its source, and XML bodies are bounded before they are parsed. Bounds
 * on dead properties and locks, and what a lock covers, are in security-webdav-locks.test.ts.
 * Every refusal checks that nothing changed.
 */
useDavApp();

describe('what an overwriting COPY or MOVE replaces', () => {
  const without = (p: keyof Permissions): Permissions => ({ ...ALL, [p]: false });
  let owner: string;

  beforeEach(async () => {
    owner = await t.user('owner', { scope: '/shared' });
    await t.user('no-delete', { scope: '/shared', perm: without('delete') });
    await tree(
      {
        'src/a.txt': 'from src',
        'dst/keep.txt': 'kept',
        'dst/deep/k.txt': 'deep',
        'f.txt': 'file f',
        'g.txt': 'file g',
      },
      file('shared'),
    );
  });

  it('needs the delete permission when a folder is replaced, or a file by a folder, and a refusal changes nothing', async () => {
    const before = await snapshot();
    const cases: Array<[string, string, string]> = [
      ['COPY', '/dav/src/', '/dav/dst/'],
      ['MOVE', '/dav/src/', '/dav/dst/'],
      ['COPY', '/dav/f.txt', '/dav/dst/'],
      ['MOVE', '/dav/f.txt', '/dav/dst'],
      ['COPY', '/dav/src/', '/dav/f.txt'],
      ['MOVE', '/dav/src', '/dav/f.txt'],
    ];
    for (const [method, from, to] of cases) {
      const res = await dav(method, from, 'no-delete', { destination: to, overwrite: 'T' });
      expect(res.statusCode, `${method} ${from} -> ${to}: ${res.body}`).toBe(403);
      expect(res.body).toContain('delete permission');
      expect(await snapshot()).toEqual(before);
    }
    expect((await dav('DELETE', '/dav/dst/', 'no-delete')).statusCode).toBe(403);
    expect(await trashOf(owner)).toEqual([]);

    // A file replaced by a file is a change of its bytes: modify is enough, as for PUT.
    const same = await dav('COPY', '/dav/f.txt', 'no-delete', { destination: '/dav/g.txt' });
    expect(same.statusCode, same.body).toBe(204);
    expect(await fs.readFile(file('shared', 'g.txt'), 'utf8')).toBe('file f');
  });

  it('puts a replaced folder into the trash whole, not merged, from where it comes back', async () => {
    const copy = await dav('COPY', '/dav/src/', 'owner', { destination: '/dav/dst/' });
    expect(copy.statusCode, copy.body).toBe(204);
    expect((await fs.readdir(file('shared', 'dst'))).sort()).toEqual(['a.txt']);
    const [item, ...others] = await trashOf(owner);
    expect(others).toEqual([]);
    expect(item).toMatchObject({ path: '/dst', isDir: true, size: 'kept'.length + 'deep'.length });

    const back = await t.req(owner, { method: 'POST', url: `/api/trash/${item!.id}/restore?rename=true` });
    expect(back.statusCode, back.body).toBe(200);
    expect(await fs.readFile(file('shared', 'dst(1)', 'deep', 'k.txt'), 'utf8')).toBe('deep');

    const move = await dav('MOVE', '/dav/f.txt', 'owner', { destination: '/dav/dst(1)' });
    expect(move.statusCode, move.body).toBe(204);
    expect(await fs.readFile(file('shared', 'dst(1)'), 'utf8')).toBe('file f');
    expect((await trashOf(owner)).map((i) => [i.path, i.isDir])).toEqual([['/dst(1)', true]]);
  });

  it('replaces a link at the destination itself, as a delete, never what it leads to', async () => {
    await fs.symlink('dst', file('shared', 'ln'));
    const before = await snapshot();
    const refused = await dav('COPY', '/dav/f.txt', 'no-delete', { destination: '/dav/ln' });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(await snapshot()).toEqual(before);

    const res = await dav('COPY', '/dav/f.txt', 'owner', { destination: '/dav/ln' });
    expect(res.statusCode, res.body).toBe(204);
    expect((await fs.lstat(file('shared', 'ln'))).isFile()).toBe(true);
    expect(await fs.readFile(file('shared', 'ln'), 'utf8')).toBe('file f');
    expect((await fs.readdir(file('shared', 'dst'))).sort()).toEqual(['deep', 'keep.txt']);
    expect((await trashOf(owner)).map((i) => [i.path, i.isDir])).toEqual([['/ln', false]]);
  });

  it('deletes for good with the trash off, still only with the delete permission', async () => {
    await t.ctx.store.settings.save({
      ...t.ctx.store.settings.get(),
      trash: { enabled: false, retentionDays: 30 },
    });
    const before = await snapshot();
    const refused = await dav('MOVE', '/dav/src/', 'no-delete', { destination: '/dav/dst/' });
    expect(refused.statusCode).toBe(403);
    expect(await snapshot()).toEqual(before);
    const res = await dav('MOVE', '/dav/src/', 'owner', { destination: '/dav/dst/' });
    expect(res.statusCode, res.body).toBe(204);
    expect(await fs.readdir(file('shared', 'dst'))).toEqual(['a.txt']);
    expect(await trashOf(owner)).toEqual([]);
  });

  it('a restore with override=true replacing a folder needs delete too', async () => {
    const deleted = await t.req(owner, { method: 'DELETE', url: '/api/resources/dst' });
    expect(deleted.statusCode).toBe(204);
    const [item] = await trashOf(owner);
    await tree({ 'dst/new.txt': 'newer' }, file('shared'));
    await setUser('owner', { perm: without('delete') });
    const before = await snapshot();
    const refused = await t.req(owner, {
      method: 'POST',
      url: `/api/trash/${item!.id}/restore?override=true`,
    });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.body).toContain('delete permission');
    expect(await snapshot()).toEqual(before);
    expect((await trashOf(owner)).map((i) => i.id)).toEqual([item!.id]);

    await setUser('owner', { perm: ALL });
    const res = await t.req(owner, { method: 'POST', url: `/api/trash/${item!.id}/restore?override=true` });
    expect(res.statusCode, res.body).toBe(200);
    expect((await fs.readdir(file('shared', 'dst'))).sort()).toEqual(['deep', 'keep.txt']);
    expect((await trashOf(owner)).map((i) => i.path)).toEqual(['/dst']);
  });
});

describe('a destination that holds its source, or lies inside it', () => {
  let owner: string;

  beforeEach(async () => {
    owner = await t.user('owner', { scope: '/o' });
    await tree(
      { 'a/sub/s.txt': 'sub', 'a/sub/deep/d.txt': 'deep', 'a/x.txt': 'x', 'b/sub/t.txt': 't' },
      file('o'),
    );
  });

  const pairs: Array<[string, string]> = [
    ['/dav/a/sub', '/dav/a'],
    ['/dav/a/sub/', '/dav/a/'],
    ['/dav/a/sub/deep', '/dav/a'],
    ['/dav/b/sub', '/dav/b'],
    ['/dav/a/sub', '/dav/'],
    ['/dav/a', '/dav/a/sub'],
    ['/dav/a', '/dav/a/new'],
    ['/dav/a/', '/dav/a/sub/deep/new/'],
  ];

  it.each(['COPY', 'MOVE'])(
    '%s is refused both ways, with and without Overwrite, changing nothing',
    async (method) => {
      const before = await snapshot();
      for (const [from, to] of pairs) {
        for (const overwrite of [{ overwrite: 'T' }, { overwrite: 'F' }, {}] as Array<
          Record<string, string>
        >) {
          const res = await dav(method, from, 'owner', { destination: to, ...overwrite });
          expect(
            [403, 409],
            `${method} ${from} -> ${to} ${JSON.stringify(overwrite)}: ${res.body}`,
          ).toContain(res.statusCode);
          expect(await snapshot()).toEqual(before);
        }
      }
      expect(await trashOf(owner)).toEqual([]);
    },
  );

  it('the web API refuses the same with override=true, changing nothing', async () => {
    const before = await snapshot();
    for (const action of ['copy', 'rename']) {
      for (const [from, to] of [
        ['/a/sub', '/a'],
        ['/b/sub', '/b'],
      ]) {
        const res = await t.req(owner, {
          method: 'PATCH',
          url: `/api/resources${from}?action=${action}&destination=${encodeURIComponent(to!)}&override=true`,
        });
        expect(res.statusCode, `${action} ${from} -> ${to}: ${res.body}`).toBe(403);
        expect(await snapshot()).toEqual(before);
      }
    }
  });
});

describe('XML bodies are bounded before they are parsed', () => {
  beforeEach(async () => {
    await t.user('ann', { scope: '/ann' });
    await tree({ 'f.txt': 'f' }, file('ann'));
  });

  const OPENERS: Record<string, string> = {
    PROPPATCH: '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>',
    LOCK: '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:owner>',
    PROPFIND: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop>',
  };

  /**
   * Sends the start of a body and never its end: answers the response, and the request to end it.
   */
  function halfSent(port: number, method: string, start: string) {
    const req = http.request({
      host: '127.0.0.1',
      port,
      method,
      path: '/dav/f.txt',
      headers: { host: HOST, authorization: basic('ann'), depth: '0', 'transfer-encoding': 'chunked' },
    });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    req.write(start);
    return { answer, req };
  }

  it('refuses a body nested too deep as it arrives, before the parser sees it, while /health answers', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const parsed = xmlStats.parsed;
    const hostile = Object.entries(OPENERS).flatMap(([method, opener]) => [
      halfSent(port, method, opener + '<Z:a xmlns:Z="urn:z">'.repeat(2000)),
      halfSent(port, method, opener + '<a>'.repeat(100)),
    ]);
    try {
      // The bodies never end: each answer comes from what was sent so far.
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      for (const { answer } of hostile) {
        const { status, body } = await answer;
        expect(status).toBe(400);
        expect(body).toContain('nested deeper than');
      }
    } finally {
      for (const { req } of hostile) req.destroy();
    }
    expect(xmlStats.parsed).toBe(parsed);
    expect((await t.ctx.store.davProps.listWithin('default', '/ann/f.txt', false)).size).toBe(0);
    expect(await t.ctx.store.davLocks.related('default', '/ann/f.txt')).toEqual([]);
  });

  it('refuses a flat body of too many elements or attributes with 400, unparsed', async () => {
    const parsed = xmlStats.parsed;
    const flat = (method: string, inner: string) => dav(method, '/dav/f.txt', 'ann', { depth: '0' }, inner);
    for (const [method, opener] of Object.entries(OPENERS)) {
      const { nodes } = XML_BOUNDS[method as XmlMethod];
      const elements = await flat(method, opener + '<x/>'.repeat(nodes));
      expect(elements.statusCode, `${method}: ${elements.body}`).toBe(400);
      expect(elements.body).toContain('too many elements');
      const many = Array.from({ length: nodes }, (_, i) => `a${i}=""`).join(' ');
      const attributes = await flat(method, `${opener}<x ${many}/>`);
      expect(attributes.statusCode, `${method}: ${attributes.body}`).toBe(400);
      expect(attributes.body).toContain('too many elements and attributes');
    }
    expect(xmlStats.parsed).toBe(parsed);
  });

  it('sizes bodies to the method: a 1 MiB PROPPATCH, LOCK or PROPFIND is refused with 413 unread', async () => {
    const parsed = xmlStats.parsed;
    const nested = (opener: string) => {
      const open = opener + '<a>'.repeat(150_000);
      return open + 'x'.repeat(Math.max(0, 1024 * 1024 - 1 - open.length));
    };
    for (const [method, opener] of Object.entries(OPENERS)) {
      const res = await dav(method, '/dav/f.txt', 'ann', { depth: '0' }, nested(opener));
      expect(res.statusCode, `${method}: ${res.body}`).toBe(413);
      expect(res.body).toMatch(/at most \d+ KiB/);
    }
    // What the methods need still passes: a LOCK with its owner, a PROPFIND of many names.
    const lock = await dav(
      'LOCK',
      '/dav/f.txt',
      'ann',
      {},
      '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner><D:href>http://example.com/~ann</D:href></D:owner></D:lockinfo>',
    );
    expect(lock.statusCode, lock.body).toBe(200);
    const names = Array.from({ length: 200 }, (_, i) => `<Z:p${i}/>`).join('');
    const find = await dav(
      'PROPFIND',
      '/dav/f.txt',
      'ann',
      { depth: '0' },
      `${OPENERS.PROPFIND!.replace('<D:prop>', '<D:prop xmlns:Z="urn:z">')}${names}</D:prop></D:propfind>`,
    );
    expect(find.statusCode, find.body).toBe(207);
    expect(xmlStats.parsed).toBe(parsed + 2);
  });
});
