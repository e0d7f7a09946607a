import fs from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { NewApiToken } from '@filebrowser/contract';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ADMIN_PASSWORD, USER_PASSWORD } from './helpers.js';
import { useAuditApp, t, alice, aliceId, USER_PERM, audit, last, count, as } from './audit-helpers.js';

/**
 * The audit log: every state change makes one record, with who, from where, what, which paths and
 * how it ended. Listing, export, retention and who may read it are in audit-reading.test.ts;
 * requests nobody signed in for and the writer in audit-unsigned.test.ts.
 */
useAuditApp();

describe('records of each kind', () => {
  it('sign-in success and failure (with the name tried) and sign-out', async () => {
    const before = await count('auth.login');
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'alice', password: 'wrong' },
      remoteAddress: '203.0.113.9',
    });
    expect(wrong.statusCode).toBe(403);
    const failed = await last('auth.login');
    expect(failed).toMatchObject({
      user: 'alice',
      userID: 0,
      address: '203.0.113.9',
      result: 'error',
      status: 403,
    });

    const token = await t.login('alice');
    expect(await last('auth.login')).toMatchObject({
      user: 'alice',
      userID: aliceId,
      result: 'ok',
      status: 200,
    });
    expect(await count('auth.login')).toBe(before + 2);

    expect((await as(token, 'POST', '/api/logout')).statusCode).toBe(200);
    expect(await last('auth.logout')).toMatchObject({ user: 'alice', result: 'ok' });
  });

  it('token creation, use (once per interval) and revocation', async () => {
    const made = await as(alice, 'POST', '/api/tokens', {
      name: 'backup',
      expiresInDays: 0,
      readOnly: false,
      current_password: USER_PASSWORD,
    });
    expect(made.statusCode).toBe(201);
    const token = made.json<NewApiToken>();
    expect(await last('token.create')).toMatchObject({
      user: 'alice',
      detail: `${token.id} backup`,
      result: 'ok',
    });

    const bearer = { authorization: `Bearer ${token.secret}` };
    for (let i = 0; i < 3; i++) {
      expect(
        (await t.app.inject({ method: 'GET', url: '/api/resources/', headers: bearer })).statusCode,
      ).toBe(200);
    }
    const uses = (await audit({ action: 'token.use' })).items.filter((e) => e.detail.startsWith(token.id));
    expect(uses).toHaveLength(1);
    expect(uses[0]).toMatchObject({ user: 'alice', path: '/api/resources/', status: 200 });

    // A write with the token names it in its own record.
    const put = await t.app.inject({
      method: 'POST',
      url: '/api/resources/by-token.txt',
      headers: bearer,
      payload: 'x',
    });
    expect(put.statusCode).toBe(200);
    expect((await last('file.upload', 'alice')).detail).toBe(`token ${token.id}`);

    expect((await as(alice, 'DELETE', `/api/tokens/${token.id}`)).statusCode).toBe(200);
    expect(await last('token.revoke')).toMatchObject({
      user: 'alice',
      detail: `${token.id} backup of alice`,
    });
  });

  it('user creation, change and deletion, and settings changes', async () => {
    const created = await as(t.adminToken, 'POST', '/api/users', {
      what: 'user',
      which: [],
      current_password: ADMIN_PASSWORD,
      data: { username: 'carol', password: 'carol-password-long', scope: '/carol', perm: USER_PERM },
    });
    expect(created.statusCode, created.body).toBe(201);
    const carol = (await t.ctx.store.users.getByUsername('carol'))!;
    expect(await last('user.create')).toMatchObject({ user: 'admin', detail: `user carol (id ${carol.id})` });

    expect((await t.updateUser(carol.id, ['locale'], { locale: 'fr' })).statusCode).toBe(200);
    expect(await last('user.update')).toMatchObject({
      user: 'admin',
      detail: `user carol (id ${carol.id}): locale`,
    });

    const deleted = await as(t.adminToken, 'DELETE', `/api/users/${carol.id}`, {
      current_password: ADMIN_PASSWORD,
    });
    expect(deleted.statusCode).toBe(200);
    expect(await last('user.delete')).toMatchObject({ detail: `user carol (id ${carol.id})`, result: 'ok' });

    expect(
      (await as(t.adminToken, 'PUT', '/api/settings', { signup: false, audit: { retentionDays: 90 } }))
        .statusCode,
    ).toBe(200);
    expect(await last('settings.update')).toMatchObject({ user: 'admin', detail: 'audit, signup' });
  });

  it('create, upload, modify, rename, move, copy and delete, with their paths', async () => {
    expect((await as(alice, 'POST', '/api/resources/docs/')).statusCode).toBe(200);
    expect(await last('file.create', 'alice')).toMatchObject({ path: '/docs/', result: 'ok' });

    expect((await as(alice, 'POST', '/api/resources/docs/a.txt', 'one')).statusCode).toBe(200);
    expect(await last('file.upload', 'alice')).toMatchObject({ path: '/docs/a.txt', destination: '' });

    expect((await as(alice, 'PUT', '/api/resources/docs/a.txt', 'two')).statusCode).toBe(200);
    expect(await last('file.modify', 'alice')).toMatchObject({ path: '/docs/a.txt' });

    const rename = await as(
      alice,
      'PATCH',
      '/api/resources/docs/a.txt?action=rename&destination=%2Fdocs%2Fb.txt',
    );
    expect(rename.statusCode).toBe(200);
    expect(await last('file.rename', 'alice')).toMatchObject({
      path: '/docs/a.txt',
      destination: '/docs/b.txt',
    });

    const move = await as(alice, 'PATCH', '/api/resources/docs/b.txt?action=rename&destination=%2Fb.txt');
    expect(move.statusCode).toBe(200);
    expect(await last('file.move', 'alice')).toMatchObject({ path: '/docs/b.txt', destination: '/b.txt' });

    // Auto-naming: the record names where the copy really went.
    const copy = await as(
      alice,
      'PATCH',
      '/api/resources/b.txt?action=copy&destination=%2Fb.txt&rename=true',
    );
    expect(copy.statusCode).toBe(200);
    expect(await last('file.copy', 'alice')).toMatchObject({ path: '/b.txt', destination: '/b(1).txt' });

    expect((await as(alice, 'DELETE', '/api/resources/b(1).txt')).statusCode).toBe(204);
    expect(await last('file.delete', 'alice')).toMatchObject({ path: '/b(1).txt', detail: 'to trash' });
  });

  it('a refused change is recorded as an error and changes nothing', async () => {
    const readOnly = await t.createUser({
      username: 'reader',
      scope: '/alice',
      perm: { ...USER_PERM, create: false, delete: false },
    });
    const reader = await t.login('reader');
    const before = await fs.readdir(path.join(t.root, 'alice'));
    const refused = await as(reader, 'POST', '/api/resources/nope.txt', 'x');
    expect(refused.statusCode).toBe(403);
    expect(await last('file.upload', 'reader')).toMatchObject({
      userID: readOnly.id,
      path: '/nope.txt',
      result: 'error',
      status: 403,
    });
    expect(await fs.readdir(path.join(t.root, 'alice'))).toEqual(before);
  });

  it('trash restore and purge', async () => {
    await fs.writeFile(path.join(t.root, 'alice', 'gone.txt'), 'g');
    expect((await as(alice, 'DELETE', '/api/resources/gone.txt')).statusCode).toBe(204);
    const [item] = (await as(alice, 'GET', '/api/trash'))
      .json<{ id: string; path: string }[]>()
      .filter((i) => i.path === '/gone.txt');
    expect((await as(alice, 'POST', `/api/trash/${item!.id}/restore`)).statusCode).toBe(200);
    expect(await last('trash.restore', 'alice')).toMatchObject({
      path: '/gone.txt',
      destination: '/gone.txt',
      detail: item!.id,
    });

    expect((await as(alice, 'DELETE', '/api/resources/gone.txt')).statusCode).toBe(204);
    const [again] = (await as(alice, 'GET', '/api/trash'))
      .json<{ id: string; path: string }[]>()
      .filter((i) => i.path === '/gone.txt');
    expect((await as(alice, 'DELETE', `/api/trash/${again!.id}`)).statusCode).toBe(204);
    expect(await last('trash.purge', 'alice')).toMatchObject({ path: '/gone.txt', result: 'ok' });

    expect((await as(alice, 'DELETE', '/api/trash')).statusCode).toBe(204);
    expect((await last('trash.purge', 'alice')).detail).toMatch(/^emptied: \d+ items$/);

    const missing = await as(alice, 'POST', '/api/trash/abc123/restore');
    expect(missing.statusCode).toBe(404);
    expect(await last('trash.restore', 'alice')).toMatchObject({
      result: 'error',
      status: 404,
      detail: 'abc123',
    });
  });

  it('a restore replacing an entry records that entry’s delete, into the trash or for good', async () => {
    /** Deletes `name` into the trash, puts another file there, and answers the item's id. */
    const takenOver = async (name: string) => {
      await fs.writeFile(path.join(t.root, 'alice', name), 'old');
      expect((await as(alice, 'DELETE', `/api/resources/${name}`)).statusCode).toBe(204);
      await fs.writeFile(path.join(t.root, 'alice', name), 'taking its name');
      const [item] = (await as(alice, 'GET', '/api/trash'))
        .json<{ id: string; path: string }[]>()
        .filter((i) => i.path === `/${name}`);
      return item!.id;
    };
    const restoreOver = async (id: string) => {
      const res = await as(alice, 'POST', `/api/trash/${id}/restore?override=true`);
      expect(res.statusCode, res.body).toBe(200);
    };

    const id = await takenOver('over.txt');
    await restoreOver(id);
    expect(await last('file.delete', 'alice')).toMatchObject({
      path: '/over.txt',
      result: 'ok',
      detail: 'to trash, replaced by a restore',
    });
    expect(await last('trash.restore', 'alice')).toMatchObject({ path: '/over.txt', detail: id });

    const forGood = await takenOver('gone-for-good.txt');
    const settings = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...settings, trash: { ...settings.trash, enabled: false } });
    try {
      await restoreOver(forGood);
    } finally {
      await t.ctx.store.settings.save(settings);
    }
    expect(await last('file.delete', 'alice')).toMatchObject({
      path: '/gone-for-good.txt',
      detail: 'permanent, replaced by a restore',
    });
  });

  it('tus: one record when the upload completes, not one per chunk', async () => {
    const before = await count('file.upload', 'alice');
    const tus = { 'tus-resumable': '1.0.0' };
    const created = await as(alice, 'POST', '/api/tus/big.bin', undefined, { ...tus, 'upload-length': '6' });
    expect(created.statusCode).toBe(201);
    const chunk = (offset: string, body: string) =>
      as(alice, 'PATCH', '/api/tus/big.bin', body, {
        ...tus,
        'content-type': 'application/offset+octet-stream',
        'upload-offset': offset,
      });
    expect((await chunk('0', 'abc')).statusCode).toBe(204);
    expect(await count('file.upload', 'alice')).toBe(before);
    expect((await chunk('3', 'def')).statusCode).toBe(204);
    expect(await count('file.upload', 'alice')).toBe(before + 1);
    expect(await last('file.upload', 'alice')).toMatchObject({ path: '/big.bin', result: 'ok' });

    expect(
      (await as(alice, 'POST', '/api/tus/cancel.bin', undefined, { ...tus, 'upload-length': '6' }))
        .statusCode,
    ).toBe(201);
    expect((await as(alice, 'DELETE', '/api/tus/cancel.bin', undefined, tus)).statusCode).toBe(204);
    expect(await last('upload.cancel', 'alice')).toMatchObject({ path: '/cancel.bin' });
  });

  it('share creation, public access and download, deletion', async () => {
    await fs.writeFile(path.join(t.root, 'alice', 'shared.txt'), 'shared');
    const made = await as(alice, 'POST', '/api/share/shared.txt', {});
    expect(made.statusCode).toBe(200);
    const { hash } = made.json<{ hash: string }>();
    expect(await last('share.create', 'alice')).toMatchObject({ path: '/shared.txt', detail: hash });

    const visit = await t.app.inject({
      method: 'GET',
      url: `/api/public/share/${hash}`,
      remoteAddress: '198.51.100.7',
    });
    expect(visit.statusCode).toBe(200);
    expect(await last('share.access')).toMatchObject({
      user: '',
      address: '198.51.100.7',
      detail: hash,
      result: 'ok',
    });
    expect((await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` })).statusCode).toBe(200);
    expect(await last('share.download')).toMatchObject({ detail: hash, result: 'ok' });

    expect((await as(alice, 'DELETE', `/api/share/${hash}`)).statusCode).toBe(200);
    expect(await last('share.delete', 'alice')).toMatchObject({ detail: hash });
    expect((await t.app.inject({ method: 'GET', url: `/api/public/dl/${hash}` })).statusCode).toBe(404);
    expect(await last('share.download')).toMatchObject({ detail: hash, result: 'error', status: 404 });
  });

  it('WebDAV writes, with the DAV client’s paths', async () => {
    const basic = {
      authorization: 'Basic ' + Buffer.from(`alice:${USER_PASSWORD}`).toString('base64'),
      host: 'dav.test',
    };
    const davReq = (method: string, url: string, headers = {}, payload?: string) =>
      t.app.inject({
        method: method as 'GET',
        url,
        headers: { ...basic, ...headers },
        ...(payload !== undefined && { payload }),
      });
    expect((await davReq('MKCOL', '/dav/davdir')).statusCode).toBe(201);
    expect(await last('file.create', 'alice')).toMatchObject({ path: '/davdir', detail: 'dav' });
    expect((await davReq('PUT', '/dav/davdir/x.txt', {}, 'x')).statusCode).toBe(201);
    expect(await last('file.upload', 'alice')).toMatchObject({ path: '/davdir/x.txt', detail: 'dav' });
    expect((await davReq('PUT', '/dav/davdir/x.txt', {}, 'y')).statusCode).toBe(204);
    expect(await last('file.modify', 'alice')).toMatchObject({ path: '/davdir/x.txt' });
    const moved = await davReq('MOVE', '/dav/davdir/x.txt', { destination: 'http://dav.test/dav/y.txt' });
    expect(moved.statusCode).toBe(201);
    expect(await last('file.move', 'alice')).toMatchObject({ path: '/davdir/x.txt', destination: '/y.txt' });
    expect((await davReq('DELETE', '/dav/y.txt')).statusCode).toBe(204);
    expect(await last('file.delete', 'alice')).toMatchObject({ path: '/y.txt', detail: 'dav' });
    const lockinfo =
      '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    expect((await davReq('LOCK', '/dav/locked.txt', {}, lockinfo)).statusCode).toBe(201);
    expect(await last('file.upload', 'alice')).toMatchObject({ path: '/locked.txt', detail: 'dav' });
    // Reads are not records.
    const before = (await audit({ user: 'alice', limit: '1000' })).items.length;
    expect((await davReq('PROPFIND', '/dav/', { depth: '1' })).statusCode).toBe(207);
    expect((await audit({ user: 'alice', limit: '1000' })).items.length).toBe(before);
  });

  it('runner commands, with their outcome', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/api/command/`, { headers: { 'x-auth': alice } });
      ws.on('open', () => ws.send('hello'));
      ws.on('message', (data) => lines.push((data as Buffer).toString('utf8')));
      ws.on('close', () => resolve());
      ws.on('error', reject);
    });
    expect(lines.join('')).toContain('hello');
    expect(await last('command.run', 'alice')).toMatchObject({ path: '/', result: 'ok', status: 200 });
    expect((await last('command.run', 'alice')).detail).toMatch(/^hello \(/);
  });
});
