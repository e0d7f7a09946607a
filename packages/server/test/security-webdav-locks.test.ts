import fs from 'node:fs/promises';
import path from 'node:path';
import type { DavLockInfo, Job } from '@filebrowser/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIO } from '../src/cli/index.js';
import { ALL, deny, PASSWORD, renameWindow } from './files-helpers.js';
import { useDavApp, t, dav, file, setUser, trashOf, snapshot, tree } from './security-webdav-helpers.js';

/**
 * WebDAV cannot hoard or block: dead properties and locks are bounded, and a lock covers only what
 * its holder may write, for the web API too. Every refusal checks that nothing changed.
 */
const seam = renameWindow();
useDavApp(seam.build);
afterEach(() => seam.clear());

const LOCKINFO = (scope = 'exclusive', owner = 'me') =>
  `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>${owner}</D:owner></D:lockinfo>`;

/** A PROPPATCH setting each `name` to its value. */
const setProps = (props: Record<string, string>) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop>${Object.entries(
    props,
  )
    .map(([k, v]) => `<Z:${k}>${v}</Z:${k}>`)
    .join('')}</D:prop></D:set></D:propertyupdate>`;
const removeProp = (name: string) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:remove><D:prop><Z:${name}/></D:prop></D:remove></D:propertyupdate>`;

describe('dead properties and locks are bounded', () => {
  beforeEach(async () => {
    await t.user('ann', { scope: '/ann' });
    await t.user('bob', { scope: '/bob' });
    const files: Record<string, string> = { 'f.txt': 'f', 'g.txt': 'g' };
    for (let i = 0; i < 18; i++) files[`n${i}.txt`] = String(i);
    await tree(files, file('ann'));
    await tree({ 'b.txt': 'b' }, file('bob'));
  });

  const stored = async (place: string) =>
    (await t.ctx.store.davProps.listWithin('default', place, false)).get(place) ?? [];

  it('refuses what passes a resource’s bounds: 507 for what it sets, 424 for the rest, nothing stored', async () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, 'v']));
    const tooMany = await dav('PROPPATCH', '/dav/f.txt', 'ann', {}, setProps(many));
    expect(tooMany.statusCode).toBe(207);
    expect(tooMany.body).toContain('HTTP/1.1 507 Insufficient Storage');
    expect(tooMany.body).toContain('at most 100 properties');
    expect(await stored('/ann/f.txt')).toEqual([]);

    const mixed = `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:remove><D:prop><Z:old/></D:prop></D:remove><D:set><D:prop><Z:big>${'x'.repeat(70 * 1024)}</Z:big></D:prop></D:set></D:propertyupdate>`;
    const tooBig = await dav('PROPPATCH', '/dav/f.txt', 'ann', {}, mixed);
    expect(tooBig.statusCode).toBe(207);
    expect(tooBig.body).toMatch(
      /<X:big xmlns:X="urn:z"\/><\/D:prop><D:status>HTTP\/1.1 507 Insufficient Storage/,
    );
    expect(tooBig.body).toMatch(
      /<X:old xmlns:X="urn:z"\/><\/D:prop><D:status>HTTP\/1.1 424 Failed Dependency/,
    );
    expect(tooBig.body).toContain('at most 64 KiB');
    expect(await stored('/ann/f.txt')).toEqual([]);

    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, 'v']));
    expect((await dav('PROPPATCH', '/dav/f.txt', 'ann', {}, setProps(hundred))).body).toContain('200 OK');
    const more = await dav('PROPPATCH', '/dav/f.txt', 'ann', {}, setProps({ extra: 'v' }));
    expect(more.body).toContain('507 Insufficient Storage');
    expect(await stored('/ann/f.txt')).toHaveLength(100);
  });

  it('bounds what one user stores in all, copies included, and leaves others their own room', async () => {
    const big = 'x'.repeat(60 * 1024);
    for (let i = 0; i < 17; i++) {
      const res = await dav('PROPPATCH', `/dav/n${i}.txt`, 'ann', {}, setProps({ big }));
      expect(res.body, `n${i}`).toContain('200 OK');
    }
    const over = await dav('PROPPATCH', '/dav/n17.txt', 'ann', {}, setProps({ big }));
    expect(over.body).toContain('507 Insufficient Storage');
    expect(over.body).toContain('at most 1024 KiB in all');
    expect(await stored('/ann/n17.txt')).toEqual([]);

    const copy = await dav('COPY', '/dav/n0.txt', 'ann', { destination: '/dav/copy.txt' });
    expect(copy.statusCode).toBe(507);
    expect(await fs.readdir(file('ann'))).not.toContain('copy.txt');
    expect(await stored('/ann/copy.txt')).toEqual([]);

    expect((await dav('PROPPATCH', '/dav/b.txt', 'bob', {}, setProps({ big }))).body).toContain('200 OK');
    expect((await dav('PROPPATCH', '/dav/n0.txt', 'ann', {}, removeProp('big'))).body).toContain('200 OK');
    expect((await dav('PROPPATCH', '/dav/n17.txt', 'ann', {}, setProps({ big }))).body).toContain('200 OK');
  });

  it('bounds what parallel requests store together: copies and PROPPATCHes in flight count', async () => {
    const big = 'x'.repeat(60 * 1024);
    // 16 × 60 KiB stored: room for one more 60 KiB, not for seven.
    for (let i = 0; i < 16; i++) {
      expect((await dav('PROPPATCH', `/dav/n${i}.txt`, 'ann', {}, setProps({ big }))).body).toContain(
        '200 OK',
      );
    }
    const copies = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => dav('COPY', '/dav/n0.txt', 'ann', { destination: `/dav/c${i}.txt` })),
    );
    const patches = await Promise.all(
      [16, 17].map((i) => dav('PROPPATCH', `/dav/n${i}.txt`, 'ann', {}, setProps({ big }))),
    );
    const landed =
      copies.filter((r) => r.statusCode === 201).length +
      patches.filter((r) => r.body.includes('200 OK')).length;
    expect(landed).toBeLessThanOrEqual(1);
    expect(
      await t.ctx.store.davProps.bytesOfUser((await t.ctx.store.users.getByUsername('ann'))!.id),
    ).toBeLessThanOrEqual(1024 * 1024);
  });

  it('a copy stores the properties it was checked for, not those set on its source while it ran', async () => {
    const big = 'x'.repeat(60 * 1024);
    // 16 × 60 KiB stored: room for one more 60 KiB.
    for (let i = 0; i < 16; i++) {
      expect((await dav('PROPPATCH', `/dav/n${i}.txt`, 'ann', {}, setProps({ big }))).body).toContain(
        '200 OK',
      );
    }
    await tree({ 'src/a.txt': 'a' }, file('ann'));
    // The copy has begun (nothing of the source's to hold) when the last room is taken on its source.
    seam.next(async () => {
      const set = await dav('PROPPATCH', '/dav/src/a.txt', 'ann', {}, setProps({ big }));
      expect(set.body).toContain('200 OK');
    });
    const copy = await dav('COPY', '/dav/src/', 'ann', { destination: '/dav/copy/' });
    expect(copy.statusCode, copy.body).toBe(201);
    expect(await stored('/ann/copy/a.txt')).toEqual([]);
    expect(
      await t.ctx.store.davProps.bytesOfUser((await t.ctx.store.users.getByUsername('ann'))!.id),
    ).toBeLessThanOrEqual(1024 * 1024);
  });

  it('counts properties against the quota of the scope they are kept in', async () => {
    const carol = await t.user('carol', { quota: 100_000 });
    await tree({ 'data.bin': 'd'.repeat(50_000) }, file('carol'));
    const refused = await dav(
      'PROPPATCH',
      '/dav/data.bin',
      'carol',
      {},
      setProps({ p: 'x'.repeat(60 * 1024) }),
    );
    expect(refused.body).toContain('507 Insufficient Storage');
    expect(refused.body).toContain('Quota exceeded');
    expect(await stored('/carol/data.bin')).toEqual([]);

    const kept = await dav('PROPPATCH', '/dav/data.bin', 'carol', {}, setProps({ p: 'x'.repeat(30 * 1024) }));
    expect(kept.body).toContain('200 OK');
    const usage = await t.get(carol, '/api/usage/');
    expect(usage.json().used).toBeGreaterThan(50_000 + 30 * 1024);
    // It would fit beside the file alone; not beside the file and its properties.
    const upload = await t.req(carol, {
      method: 'POST',
      url: '/api/resources/more.bin',
      payload: 'm'.repeat(30_000),
    });
    expect(upload.statusCode).toBe(507);
    expect(await fs.readdir(file('carol'))).toEqual(['data.bin']);
  });

  it('counts the properties a move carries into a folder with a quota, through WebDAV and the API', async () => {
    const carol = await t.user('carol', { quota: 100_000 });
    const team = await t.user('team', { scope: '/', perm: { ...ALL } });
    await tree({ 'carol/have.bin': 'h'.repeat(40_000), 'src/a/p.bin': 'p', 'src/b/p.bin': 'p' });
    for (const leaf of ['a', 'b']) {
      const set = await dav(
        'PROPPATCH',
        `/dav/src/${leaf}/p.bin`,
        'team',
        {},
        setProps({ p: 'x'.repeat(60 * 1024) }),
      );
      expect(set.body).toContain('200 OK');
    }
    // One byte of files, 60 KiB of properties: past carol's room beside what she has.
    const moved = await dav('MOVE', '/dav/src/a', 'team', { destination: '/dav/carol/a' });
    expect(moved.statusCode, moved.body).toBe(507);
    const renamed = await t.req(team, {
      method: 'PATCH',
      url: '/api/resources/src/b?action=rename&destination=%2Fcarol%2Fb',
    });
    expect(renamed.statusCode, renamed.body).toBe(507);
    expect((await fs.readdir(file('carol'))).sort()).toEqual(['have.bin']);
    expect((await fs.readdir(file('src'))).sort()).toEqual(['a', 'b']);
    expect((await t.get(carol, '/api/usage/')).json().used).toBe(40_000);
  });

  it('bounds the locks of a resource and of a user with 507, and a lock’s life however it is refreshed', async () => {
    for (let i = 0; i < 16; i++) {
      const res = await dav('LOCK', '/dav/f.txt', 'ann', { depth: '0' }, LOCKINFO('shared', `o${i}`));
      expect(res.statusCode, res.body).toBe(200);
    }
    const seventeenth = await dav('LOCK', '/dav/f.txt', 'ann', { depth: '0' }, LOCKINFO('shared'));
    expect(seventeenth.statusCode).toBe(507);
    expect(await t.ctx.store.davLocks.countAt('default', '/ann/f.txt')).toBe(16);

    const ann = (await t.ctx.store.users.getByUsername('ann'))!;
    const now = Date.now();
    for (let i = 0; (await t.ctx.store.davLocks.countOfUser(ann.id)) < 500; i++) {
      await t.ctx.store.davLocks.create({
        token: `opaquelocktoken:00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        rootId: 'default',
        path: `/ann/many/${i}`,
        userId: ann.id,
        scope: 'exclusive',
        depth: '0',
        owner: '',
        timeout: 3600,
        expiresAt: now + 3600_000,
        createdAt: now,
      });
    }
    const over = await dav('LOCK', '/dav/g.txt', 'ann', {}, LOCKINFO());
    expect(over.statusCode).toBe(507);
    expect(over.body).toContain('500 WebDAV locks already');
    expect(await t.ctx.store.davLocks.related('default', '/ann/g.txt')).toEqual([]);
    // Another user is not held back by ann's count.
    expect((await dav('LOCK', '/dav/b.txt', 'bob', {}, LOCKINFO())).statusCode).toBe(200);

    // A week after it was taken a lock ends, refreshed or not: this one has an hour left.
    const WEEK = 7 * 24 * 3600_000;
    const bobs = (await t.ctx.store.davLocks.related('default', '/bob/b.txt'))[0]!;
    const createdAt = Date.now() - WEEK + 3600_000;
    await t.ctx.store.davLocks.delete(bobs.token);
    await t.ctx.store.davLocks.create({ ...bobs, createdAt });
    const refreshed = await dav('LOCK', '/dav/b.txt', 'bob', {
      if: `(<${bobs.token}>)`,
      timeout: 'Second-86400',
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(Number(/<D:timeout>Second-(\d+)<\/D:timeout>/.exec(refreshed.body)![1])).toBeLessThanOrEqual(3600);
    expect((await t.ctx.store.davLocks.get(bobs.token))!.expiresAt).toBeLessThanOrEqual(createdAt + WEEK);
  });
});

describe('a lock covers only what its holder may write, for every way in', () => {
  let ann: string;
  let bob: string;
  let boss: string;

  beforeEach(async () => {
    ann = await t.user('ann', { scope: '/team', rules: [deny('/dir/private')] });
    bob = await t.user('bob', { scope: '/team' });
    boss = await t.user('boss', { scope: '/', perm: { ...ALL, admin: true } });
    await tree(
      {
        'plan.txt': 'ann writes this',
        'other.txt': 'other',
        'old.txt': 'old',
        'dir/open.txt': 'open',
        'dir/private/secret.txt': 'secret',
      },
      file('team'),
    );
  });

  /** ann locks `url`; answers the token. */
  async function annLocks(url: string, depth = 'infinity'): Promise<string> {
    const res = await dav('LOCK', url, 'ann', { depth, timeout: 'Second-600' }, LOCKINFO());
    expect([200, 201], res.body).toContain(res.statusCode);
    return String(res.headers['lock-token']).slice(1, -1);
  }
  const LOCKED = /^423 Locked \(locked by ann through WebDAV until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\n$/;

  it('a depth-infinity lock does not reach what its holder’s rules hide, through WebDAV or the web API', async () => {
    await annLocks('/dav/dir/');
    const hidden = await dav('PUT', '/dav/dir/private/x.txt', 'bob', {}, 'bob');
    expect(hidden.statusCode, hidden.body).toBe(201);
    const put = await t.req(bob, { method: 'POST', url: '/api/resources/dir/private/y.txt', payload: 'y' });
    expect(put.statusCode, put.body).toBe(200);

    const seen = await dav('PUT', '/dav/dir/open.txt', 'bob', {}, 'bob');
    expect(seen.statusCode).toBe(423);
    expect(seen.body).toContain('<D:lock-token-submitted><D:href>/dav/dir</D:href>');
    const api = await t.req(bob, { method: 'PUT', url: '/api/resources/dir/open.txt', payload: 'bob' });
    expect(api.statusCode).toBe(423);
    expect(api.body).toMatch(LOCKED);
    expect(await fs.readFile(file('team', 'dir', 'open.txt'), 'utf8')).toBe('open');
  });

  it('ends a lock whose holder can no longer write its place: permissions, rules or scope changed', async () => {
    const ok = async () => {
      const res = await dav('PUT', '/dav/plan.txt', 'bob', {}, 'bob');
      expect(res.statusCode, res.body).toBe(204);
    };
    const annUser = (await t.ctx.store.users.getByUsername('ann'))!;
    let token = await annLocks('/dav/plan.txt', '0');
    await setUser('ann', { perm: { ...ALL, modify: false, create: false } });
    await ok();
    expect(await t.ctx.store.davLocks.get(token)).toBeUndefined();

    await setUser('ann', { perm: ALL });
    token = await annLocks('/dav/plan.txt', '0');
    await setUser('ann', { rules: [deny('/plan.txt')] });
    await ok();
    expect(await t.ctx.store.davLocks.get(token)).toBeUndefined();

    await setUser('ann', { rules: annUser.rules });
    token = await annLocks('/dav/plan.txt', '0');
    await fs.mkdir(file('elsewhere'));
    await setUser('ann', { scope: '/elsewhere' });
    await ok();
    expect(await t.ctx.store.davLocks.get(token)).toBeUndefined();
  });

  it('ends a lock taken with an API token when the token is revoked or expires', async () => {
    const made = await t.req(ann, {
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'sync', expiresInDays: 0, readOnly: false, current_password: PASSWORD },
    });
    expect(made.statusCode, made.body).toBe(201);
    const token = made.json<{ id: string; secret: string }>();
    const authorization = 'Basic ' + Buffer.from(`ann:${token.secret}`).toString('base64');
    const locked = await dav(
      'LOCK',
      '/dav/plan.txt',
      'ann',
      { authorization, depth: '0', timeout: 'Second-600' },
      LOCKINFO(),
    );
    expect(locked.statusCode, locked.body).toBe(200);
    const lockToken = String(locked.headers['lock-token']).slice(1, -1);
    expect((await dav('PUT', '/dav/plan.txt', 'bob', {}, 'bob')).statusCode).toBe(423);

    const revoked = await t.req(ann, { method: 'DELETE', url: `/api/tokens/${token.id}` });
    expect(revoked.statusCode, revoked.body).toBeLessThan(300);
    expect(await t.ctx.store.davLocks.get(lockToken)).toBeUndefined();
    const put = await dav('PUT', '/dav/plan.txt', 'bob', {}, 'bob');
    expect(put.statusCode, put.body).toBe(204);
    // One whose token expires ends too.
    const second = await t.req(ann, {
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'sync 2', expiresInDays: 1, readOnly: false, current_password: PASSWORD },
    });
    const token2 = second.json<{ id: string; secret: string }>();
    const auth2 = 'Basic ' + Buffer.from(`ann:${token2.secret}`).toString('base64');
    const again = await dav(
      'LOCK',
      '/dav/plan.txt',
      'ann',
      { authorization: auth2, depth: '0', timeout: 'Second-600' },
      LOCKINFO(),
    );
    expect(again.statusCode, again.body).toBe(200);
    expect((await dav('PUT', '/dav/plan.txt', 'bob', {}, 'bob')).statusCode).toBe(423);
    await t.ctx.store.sql
      .updateTable('api_tokens')
      .set({ expires_at: Date.now() - 1000 })
      .where('id', '=', token2.id)
      .execute();
    expect((await dav('PUT', '/dav/plan.txt', 'bob', {}, 'bob')).statusCode).toBe(204);
    // A lock taken with the password is the account's, untouched by tokens.
    const own = await annLocks('/dav/other.txt', '0');
    expect(await t.ctx.store.davLocks.get(own)).toBeDefined();
  });

  it('the web API honours locks on every write, answering 423 with who holds them, and changes nothing', async () => {
    const deleted = await t.req(bob, { method: 'DELETE', url: '/api/resources/old.txt' });
    expect(deleted.statusCode).toBe(204);
    const [item] = await trashOf(bob);
    await tree({ 'old.txt': 'old again' }, file('team'));
    await annLocks('/dav/plan.txt', '0');
    await annLocks('/dav/old.txt', '0');
    await annLocks('/dav/dir/');
    const before = await snapshot();

    const writes: Array<[string, string, string?, Record<string, string>?]> = [
      ['PUT', '/api/resources/plan.txt', 'x'],
      ['POST', '/api/resources/plan.txt?override=true', 'x'],
      ['DELETE', '/api/resources/plan.txt'],
      ['PATCH', '/api/resources/plan.txt?action=rename&destination=%2Fmoved.txt'],
      ['PATCH', '/api/resources/other.txt?action=copy&destination=%2Fplan.txt&override=true'],
      ['PATCH', '/api/resources/other.txt?action=rename&destination=%2Fdir%2Fother.txt'],
      ['POST', '/api/resources/dir/new.txt', 'x'],
      ['POST', '/api/resources/dir/sub/'],
      ['DELETE', '/api/resources/dir'],
      ['POST', '/api/tus/plan.txt?override=true', undefined, { 'upload-length': '1' }],
      ['POST', '/api/tus/dir/new.txt', undefined, { 'upload-length': '1' }],
      ['POST', `/api/trash/${item!.id}/restore?override=true`],
    ];
    for (const [method, url, payload, headers] of writes) {
      const res = await t.req(bob, {
        method: method as 'GET',
        url,
        ...(payload !== undefined && { payload }),
        ...(headers && { headers }),
      });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(423);
      expect(res.body).toMatch(LOCKED);
    }
    const ended = new Promise<Job>((resolve) => t.ctx.jobs.once('finished', resolve));
    const job = await t.req(bob, {
      method: 'POST',
      url: '/api/jobs',
      payload: { action: 'copy', items: ['/other.txt'], destination: '/dir' },
    });
    expect(job.statusCode, job.body).toBe(202);
    expect((await ended).error).toMatch(/locked by ann through WebDAV until /);

    expect(await snapshot()).toEqual(before);
    expect((await trashOf(bob)).map((i) => i.id)).toEqual([item!.id]);
    // The holder's own locks do not stand in their way in the web app, which cannot name them.
    const own = await t.req(ann, { method: 'PUT', url: '/api/resources/plan.txt', payload: 'ann' });
    expect(own.statusCode, own.body).toBe(200);
  });

  it('a depth-0 lock on a folder holds back writes that would make a folder in it on the way', async () => {
    await tree({ 'dir/sub/y.txt': 'y' }, file('team'));
    for (const url of ['/api/resources/dir/sub/y.txt', '/api/resources/dir/sub']) {
      expect((await t.req(bob, { method: 'DELETE', url })).statusCode).toBe(204);
    }
    const deep = (await trashOf(bob)).find((i) => i.path === '/dir/sub/y.txt')!;
    await annLocks('/dav/dir/', '0');
    const before = await snapshot();

    const writes: Array<[string, string, string?, Record<string, string>?]> = [
      ['POST', '/api/resources/dir/a/b/'],
      ['POST', '/api/resources/dir/p/q.txt', 'x'],
      ['POST', '/api/tus/dir/t/u.txt', undefined, { 'upload-length': '1' }],
      ['PATCH', '/api/resources/other.txt?action=rename&destination=%2Fdir%2Fnd1%2Fother.txt'],
      ['PATCH', '/api/resources/other.txt?action=copy&destination=%2Fdir%2Fnd2%2Fother.txt'],
      ['POST', `/api/trash/${deep.id}/restore`],
    ];
    for (const [method, url, payload, headers] of writes) {
      const res = await t.req(bob, {
        method: method as 'GET',
        url,
        ...(payload !== undefined && { payload }),
        ...(headers && { headers }),
      });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(423);
      expect(res.body).toMatch(LOCKED);
    }
    const ended = new Promise<Job>((resolve) => t.ctx.jobs.once('finished', resolve));
    const job = await t.req(bob, {
      method: 'POST',
      url: '/api/jobs',
      payload: { action: 'copy', items: ['/other.txt'], destination: '/dir/nd3' },
    });
    expect(job.statusCode, job.body).toBe(202);
    expect((await ended).error).toMatch(/locked by ann through WebDAV until /);
    expect(await snapshot()).toEqual(before);

    // A depth-0 lock is the folder's own: what is below its members stays open.
    const below = await t.req(bob, {
      method: 'POST',
      url: '/api/resources/dir/private/z/w.txt',
      payload: 'w',
    });
    expect(below.statusCode, below.body).toBe(200);
  });

  it('holds back a copy that began before it: no folder is made in a folder locked meanwhile', async () => {
    // One file and eight folders merged into folders of the same names: when the file lands
    // (wherever the walk, in the folder's own order, takes it), the seam locks every destination
    // folder, and no folder may be made in one of them after that.
    const folders = Array.from({ length: 8 }, (_, i) => `L${i}`);
    await tree({ 'src/0.txt': '0' }, file('team'));
    for (const name of folders) {
      await fs.mkdir(file('team', 'src', name, 'g'), { recursive: true });
      await fs.mkdir(file('team', 'dst', name), { recursive: true });
    }
    const madeBefore = new Set<string>();
    seam.next(async () => {
      for (const name of folders) {
        if ((await fs.readdir(file('team', 'dst', name))).includes('g')) madeBefore.add(name);
        await annLocks(`/dav/dst/${name}/`, '0');
      }
    });
    const copy = await t.req(bob, {
      method: 'PATCH',
      url: '/api/resources/src?action=copy&destination=%2Fdst&override=true',
    });
    expect([200, 423], copy.body).toContain(copy.statusCode);
    for (const name of folders) {
      const made = (await fs.readdir(file('team', 'dst', name))).includes('g');
      expect(made && !madeBefore.has(name), `dst/${name}/g made after the lock`).toBe(false);
    }
  });

  it('holds back a merge that began before it: no file it locks is replaced, and the merge is undone', async () => {
    await tree(
      { 'src/a.txt': 'bob a', 'src/b.txt': 'bob b', 'dst/a.txt': 'ann a', 'dst/b.txt': 'ann b' },
      file('team'),
    );
    // When the merge is about to replace its first file, ann locks both.
    seam.next(async () => {
      await annLocks('/dav/dst/a.txt', '0');
      await annLocks('/dav/dst/b.txt', '0');
    });
    const merge = await t.req(bob, {
      method: 'PATCH',
      url: '/api/resources/src?action=rename&destination=%2Fdst&override=true',
    });
    expect(merge.statusCode, merge.body).toBe(423);
    expect(merge.body).toMatch(LOCKED);
    for (const name of ['a', 'b']) {
      expect(await fs.readFile(file('team', 'dst', `${name}.txt`), 'utf8')).toBe(`ann ${name}`);
      expect(await fs.readFile(file('team', 'src', `${name}.txt`), 'utf8')).toBe(`bob ${name}`);
    }
  });

  it('holds back a move that began before it: the entry does not land in a folder locked meanwhile', async () => {
    await tree({ 'mine.txt': 'bob', 'L/.keep': '' }, file('team'));
    seam.next(() => annLocks('/dav/L/', '0').then(() => undefined));
    const move = await t.req(bob, {
      method: 'PATCH',
      url: '/api/resources/mine.txt?action=rename&destination=%2FL%2Fmine.txt',
    });
    expect(move.statusCode, move.body).toBe(423);
    expect(await fs.readFile(file('team', 'mine.txt'), 'utf8')).toBe('bob');
    expect(await fs.readdir(file('team', 'L'))).toEqual(['.keep']);
  });

  it('a lock taken through a symbolic link holds what the link leads to, by every name', async () => {
    await fs.symlink('dir', file('team', 'dirlink'));
    await fs.symlink('plan.txt', file('team', 'planlink'));
    const dirToken = await annLocks('/dav/dirlink/');
    const planToken = await annLocks('/dav/planlink', '0');
    const before = await snapshot();

    for (const url of ['/dav/dir/open.txt', '/dav/dirlink/open.txt', '/dav/dir/new.txt', '/dav/plan.txt']) {
      const res = await dav('PUT', url, 'bob', {}, 'bob');
      expect(res.statusCode, `${url}: ${res.body}`).toBe(423);
    }
    for (const url of ['/api/resources/dir/open.txt', '/api/resources/plan.txt']) {
      const res = await t.req(bob, { method: 'PUT', url, payload: 'bob' });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(423);
      expect(res.body).toMatch(LOCKED);
    }
    expect(await snapshot()).toEqual(before);

    // The holder names its lock through either name; refreshing and unlocking work through the link.
    const own = await dav('PUT', '/dav/dir/open.txt', 'ann', { if: `(<${dirToken}>)` }, 'ann');
    expect(own.statusCode, own.body).toBe(204);
    const refreshed = await dav('LOCK', '/dav/dirlink/', 'ann', {
      if: `(<${dirToken}>)`,
      timeout: 'Second-60',
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    for (const [url, token] of [
      ['/dav/dirlink/', dirToken],
      ['/dav/planlink', planToken],
    ] as const) {
      const res = await dav('UNLOCK', url, 'ann', { 'lock-token': `<${token}>` });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(204);
    }
    expect((await dav('PUT', '/dav/plan.txt', 'bob', {}, 'bob')).statusCode).toBe(204);
  });

  it('shows administrators every lock and lets them break one, through the API and the command line', async () => {
    const plan = await annLocks('/dav/plan.txt', '0');
    const dir = await annLocks('/dav/dir/');
    expect((await t.get(bob, '/api/dav/locks')).statusCode).toBe(403);
    const listed = await t.get(boss, '/api/dav/locks');
    expect(listed.statusCode, listed.body).toBe(200);
    const locks = listed.json() as DavLockInfo[];
    expect(locks.map((l) => [l.token, l.path, l.username, l.scope, l.depth, l.owner])).toEqual([
      [plan, '/team/plan.txt', 'ann', 'exclusive', '0', 'me'],
      [dir, '/team/dir', 'ann', 'exclusive', 'infinity', 'me'],
    ]);
    expect(locks[0]!.expiresAt).toBeGreaterThan(locks[0]!.createdAt);

    const breakIt = (token: string, who: string) =>
      t.req(who, { method: 'DELETE', url: `/api/dav/locks/${encodeURIComponent(token)}` });
    expect((await breakIt(plan, bob)).statusCode).toBe(403);
    expect(
      (await t.req(bob, { method: 'PUT', url: '/api/resources/plan.txt', payload: 'b' })).statusCode,
    ).toBe(423);
    expect((await breakIt(plan, boss)).statusCode).toBe(204);
    expect((await breakIt(plan, boss)).statusCode).toBe(404);
    expect(
      (await t.req(bob, { method: 'PUT', url: '/api/resources/plan.txt', payload: 'b' })).statusCode,
    ).toBe(200);
    await t.ctx.audit.flush();
    const broken = (await t.ctx.store.audit.list({ action: 'lock.break' }, 10)).filter(
      (r) => r.status === 204,
    );
    expect(broken).toMatchObject([{ username: 'boss', path: '/team/plan.txt' }]);

    let out = '';
    let err = '';
    const io: CliIO = {
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      env: {},
      places: { cwd: t.base, home: t.base, systemDir: path.join(t.base, 'etc') },
      ownsProcess: false,
    };
    const database = t.ctx.config.database;
    expect(await runCli(['locks', 'ls', '-d', database], io)).toBe(0);
    expect(out).toMatch(
      new RegExp(
        `^Token +User +Path +Scope +Depth +Until +Owner\n${dir} +ann +/team/dir +exclusive +infinity +\\S+ +me\n$`,
      ),
    );
    out = '';
    expect(await runCli(['locks', 'break', 'opaquelocktoken:nope', '-d', database], io)).toBe(1);
    expect(err).toContain('no such lock');
    expect(await runCli(['locks', 'break', dir, '-d', database], io)).toBe(0);
    expect(out).toBe('Broke the lock of ann on /team/dir.\n');
    expect((await dav('PUT', '/dav/dir/open.txt', 'bob', {}, 'bob')).statusCode).toBe(204);
    out = '';
    expect(await runCli(['locks', 'ls', '-d', database], io)).toBe(0);
    expect(out).toBe('No WebDAV locks.\n');
  });
});
