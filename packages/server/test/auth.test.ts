import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { signToken } from '../src/auth/tokens.js';
import { ALL_PERMISSIONS } from '../src/store/users.js';
import { ADMIN_PASSWORD, startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await t.close();
});

describe('POST /api/login', () => {
  it('answers the token as plain text with File Browser claims', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'admin', password: ADMIN_PASSWORD },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const claims = decodeJwt(res.body);
    expect(claims.iss).toBe('File Browser');
    expect(Object.keys(claims)).toEqual(['user', 'iss', 'exp', 'iat', 'sid']);
    expect(decodeProtectedHeader(res.body).alg).toBe('HS256');
    // Contract 1.3: these keys, in this order; no scope, rules or password.
    expect(Object.keys(claims.user as object).slice(0, 12)).toEqual([
      'id',
      'locale',
      'viewMode',
      'singleClick',
      'redirectAfterCopyMove',
      'perm',
      'commands',
      'lockPassword',
      'hideDotfiles',
      'dateFormat',
      'username',
      'aceEditorTheme',
    ]);
    for (const secret of ['scope', 'rules', 'password', 'passwordHash']) {
      expect(Object.keys(claims.user as object)).not.toContain(secret);
    }
    expect((claims.user as { username: string }).username).toBe('admin');
    expect(claims.exp! - claims.iat!).toBe(7200);
  });

  it('refuses wrong passwords, unknown users and unreadable bodies with 403', async () => {
    for (const payload of [
      { username: 'admin', password: 'nope-nope-nope' },
      { username: 'ghost', password: ADMIN_PASSWORD },
    ]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/login', payload });
      expect(res.statusCode).toBe(403);
      expect(res.body).toBe('403 Forbidden\n');
    }
    const bad = await t.app.inject({ method: 'POST', url: '/api/login', payload: '{not json' });
    expect(bad.statusCode).toBe(403);
  });

  it('rate limits repeated failures per address with 429 and Retry-After', async () => {
    let last = 0;
    let retryAfter: string | undefined;
    for (let i = 0; i < 12; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/login',
        payload: { username: `ghost${i}`, password: 'wrong-wrong-wrong' },
      });
      last = res.statusCode;
      retryAfter = res.headers['retry-after'] as string | undefined;
    }
    expect(last).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // Even the right password waits until the window passes.
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'admin', password: ADMIN_PASSWORD },
    });
    expect(res.statusCode).toBe(429);
  });

  it('wrong passwords from other addresses never keep out the right one, but tighten their allowance', async () => {
    const attempt = (remoteAddress: string, password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/login',
        remoteAddress,
        payload: { username: 'admin', password },
      });
    for (let i = 0; i < 10; i++)
      expect((await attempt(`10.0.0.${i + 1}`, 'wrong-wrong-wrong')).statusCode).toBe(403);
    expect((await attempt('10.0.1.1', ADMIN_PASSWORD)).statusCode).toBe(200);
    // Under attack, each address gets a quarter of the limit for this user.
    for (let i = 0; i < 3; i++) expect((await attempt('10.0.2.1', 'wrong-wrong-wrong')).statusCode).toBe(403);
    const res = await attempt('10.0.2.1', ADMIN_PASSWORD);
    expect(res.statusCode).toBe(429);
    expect(res.body).toContain('too many login attempts');
  });

  it('refuses bodies over 1 MiB', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ username: 'admin', password: 'x'.repeat(1024 * 1024) }),
    });
    expect(res.statusCode).toBe(413);
  });

  it('refuses passwords longer than bcrypt reads', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'admin', password: ADMIN_PASSWORD + 'x'.repeat(80) },
    });
    expect(res.statusCode).toBe(403);
  });
});

describe('sessions', () => {
  it('accepts X-Auth on any method and the auth cookie on GET only', async () => {
    const get = await t.app.inject({ method: 'GET', url: '/api/users/1', cookies: { auth: t.adminToken } });
    expect(get.statusCode).toBe(200);
    const put = await t.app.inject({
      method: 'PUT',
      url: '/api/users/1',
      cookies: { auth: t.adminToken },
      payload: { what: 'user', which: ['locale'], data: { id: 1, locale: 'de' } },
    });
    expect(put.statusCode).toBe(401);
    expect(put.body).toBe('401 Unauthorized\n');
  });

  it('logout revokes the token', async () => {
    const token = await t.login('admin', ADMIN_PASSWORD);
    expect((await t.request(token, { method: 'POST', url: '/api/logout' })).statusCode).toBe(200);
    expect((await t.request(token, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(401);
    // Other sessions of the same user live on.
    expect((await t.request(t.adminToken, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(200);
  });

  it('logout takes POST with a live token only', async () => {
    const token = await t.login('admin', ADMIN_PASSWORD);
    const get = await t.request(token, { method: 'GET', url: '/api/logout' });
    expect(get.statusCode).toBe(405);
    expect((await t.request(token, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(200);
    const anonymous = await t.request(undefined, { method: 'POST', url: '/api/logout' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).toBe('401 Unauthorized\n');
    expect((await t.request(token, { method: 'POST', url: '/api/logout' })).statusCode).toBe(200);
    const again = await t.request(token, { method: 'POST', url: '/api/logout' });
    expect(again.statusCode).toBe(401);
  });

  it('renew rotates: the old token stops working, the new one works', async () => {
    const old = await t.login('admin', ADMIN_PASSWORD);
    const res = await t.request(old, { method: 'POST', url: '/api/renew' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-renew-token']).toBe('false');
    expect((await t.request(old, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(401);
    expect((await t.request(res.body, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(200);
  });

  it('a password change ends the other sessions of that user', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const first = await t.login('bob');
    const second = await t.login('bob');
    const res = await t.request(first, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: {
        what: 'user',
        which: ['password'],
        current_password: USER_PASSWORD,
        data: { id: bob.id, password: 'a-brand-new-password-42' },
      },
    });
    expect(res.statusCode).toBe(200);
    expect((await t.request(second, { method: 'GET', url: `/api/users/${bob.id}` })).statusCode).toBe(401);
    expect((await t.request(first, { method: 'GET', url: `/api/users/${bob.id}` })).statusCode).toBe(200);
    await t.login('bob', 'a-brand-new-password-42');
  });

  it('an admin removing a permission ends the sessions of that user', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: {
        what: 'user',
        which: ['perm'],
        current_password: ADMIN_PASSWORD,
        data: { id: bob.id, perm: { ...bob.perm, delete: false } },
      },
    });
    expect(res.statusCode).toBe(200);
    expect((await t.request(token, { method: 'GET', url: `/api/users/${bob.id}` })).statusCode).toBe(401);
  });

  it('an admin granting a permission ends the sessions of that user too', async () => {
    const bob = await t.createUser({
      username: 'bob',
      perm: { ...ALL_PERMISSIONS, admin: false, share: false },
    });
    const token = await t.login('bob');
    const adminSecond = await t.login('admin', ADMIN_PASSWORD);
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: {
        what: 'user',
        which: ['perm'],
        current_password: ADMIN_PASSWORD,
        data: { id: bob.id, perm: { ...bob.perm, share: true } },
      },
    });
    expect(res.statusCode).toBe(200);
    expect((await t.request(token, { method: 'GET', url: `/api/users/${bob.id}` })).statusCode).toBe(401);
    // Only that user's sessions: the admin's other session lives on.
    expect((await t.request(adminSecond, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(200);
    // A change that leaves the permissions as they were ends nothing.
    const fresh = await t.login('bob');
    const same = await t.request(t.adminToken, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: {
        what: 'user',
        which: ['perm', 'locale'],
        current_password: ADMIN_PASSWORD,
        data: { id: bob.id, perm: { ...bob.perm, share: true }, locale: 'fr' },
      },
    });
    expect(same.statusCode).toBe(200);
    expect((await t.request(fresh, { method: 'GET', url: `/api/users/${bob.id}` })).statusCode).toBe(200);
  });

  it("a deleted user's token answers 401, not 500", async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    const del = await t.request(t.adminToken, {
      method: 'DELETE',
      url: `/api/users/${bob.id}`,
      payload: { current_password: ADMIN_PASSWORD },
    });
    expect(del.statusCode).toBe(200);
    for (const [method, url] of [
      ['GET', `/api/users/${bob.id}`],
      ['POST', '/api/renew'],
      ['GET', '/api/resources/'],
    ] as const) {
      const res = await t.request(token, { method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.body).toBe('401 Unauthorized\n');
    }
  });

  it("a token of a user removed behind the server's back answers 401, not 500", async () => {
    // The user row disappears without the usual clean-up (e.g. a database edited by hand).
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    await t.ctx.store.users.delete(bob.id);
    const res = await t.request(token, { method: 'GET', url: '/api/resources/' });
    expect(res.statusCode).toBe(401);
  });

  it('asks for renewal after the user was changed', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    await new Promise((r) => setTimeout(r, 1100));
    await t.request(token, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: { what: 'user', which: ['locale'], data: { id: bob.id, locale: 'fr' } },
    });
    const res = await t.request(token, { method: 'GET', url: `/api/users/${bob.id}` });
    expect(res.headers['x-renew-token']).toBe('true');
    expect(res.json().locale).toBe('fr');
  });

  it('asks for renewal when the token has less than an hour left', async () => {
    const short = await startTestApp({ tokenExpirationTime: 30 * 60 });
    try {
      const token = await short.login('admin', ADMIN_PASSWORD);
      const res = await short.request(token, { method: 'GET', url: '/api/users/1' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-renew-token']).toBe('true');
    } finally {
      await short.close();
    }
    // A fresh two-hour token is left alone.
    const res = await t.request(t.adminToken, { method: 'GET', url: '/api/users/1' });
    expect(res.headers['x-renew-token']).toBeUndefined();
  });

  it('rejects tokens signed with another key, or malformed', async () => {
    const [h, p] = t.adminToken.split('.');
    for (const token of [`${h}.${p}.forged`, 'abc', '']) {
      expect((await t.request(token, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(401);
    }
  });

  it('answers 401, not 500, to a token signed with the key whose claims have the wrong types', async () => {
    const admin = (await t.ctx.store.users.get(1))!;
    const key = t.ctx.store.settings.get().key;
    for (const sid of [123, { $ne: '' }, ['a'], true]) {
      const token = await signToken(admin, sid as unknown as string, key, 3600);
      const res = await t.request(token, { method: 'GET', url: '/api/users/1' });
      expect(res.statusCode, JSON.stringify(sid)).toBe(401);
    }
  });
});

describe('POST /api/signup', () => {
  it('is 405 while signup is off', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/signup',
      payload: { username: 'x', password: 'y' },
    });
    expect(res.statusCode).toBe(405);
    expect(res.body).toBe('405 Method Not Allowed\n');
    expect(await t.ctx.store.users.getByUsername('x')).toBeUndefined();
  });

  describe('when enabled', () => {
    beforeEach(async () => {
      const s = t.ctx.store.settings.get();
      await t.ctx.store.settings.save({
        ...s,
        signup: true,
        createUserDir: true,
        defaults: {
          ...s.defaults,
          perm: { ...s.defaults.perm, admin: true, execute: true },
          commands: ['ls'],
        },
      });
    });

    it('creates a user without admin or execute, in their own home folder', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/signup',
        payload: { username: 'Carol', password: 'carols-long-password' },
      });
      expect(res.statusCode).toBe(200);
      const carol = (await t.ctx.store.users.getByUsername('carol'))!;
      expect(carol.perm.admin).toBe(false);
      expect(carol.perm.execute).toBe(false);
      expect(carol.commands).toEqual([]);
      expect(carol.scope).toBe('/users/Carol');
      expect(fs.statSync(path.join(t.root, 'users', 'Carol')).isDirectory()).toBe(true);
      // Signing up gives no token: the client logs in afterwards.
      expect(res.body).toBe('200 OK\n');
      await t.login('Carol', 'carols-long-password');
    });

    it('answers 409 for a username that differs only in case or normalisation', async () => {
      await t.createUser({ username: 'José' });
      for (const username of ['JOSÉ', 'Jose\u0301', 'josé']) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/signup',
          payload: { username, password: 'another-long-password' },
        });
        expect(res.statusCode).toBe(409);
        expect(res.body).toBe('409 Conflict (a user with this username already exists)\n');
      }
      expect((await t.ctx.store.users.list()).map((u) => u.username)).toEqual(['admin', 'José']);
    });

    it('uses the default scope when home folders are off, still without admin or execute', async () => {
      const s = t.ctx.store.settings.get();
      await t.ctx.store.settings.save({
        ...s,
        createUserDir: false,
        defaults: { ...s.defaults, scope: '/shared' },
      });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/signup',
        payload: { username: 'eve', password: 'eves-long-password' },
      });
      expect(res.statusCode).toBe(200);
      const eve = (await t.ctx.store.users.getByUsername('eve'))!;
      expect(eve.scope).toBe('/shared');
      expect(eve.perm.admin || eve.perm.execute).toBe(false);
      expect(eve.lockPassword).toBe(false);
    });

    it('never takes admin rights or a scope from the request body', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/signup',
        payload: {
          username: 'mallory',
          password: 'mallorys-long-password',
          scope: '/',
          perm: { admin: true, execute: true },
        },
      });
      expect(res.statusCode).toBe(200);
      const mallory = (await t.ctx.store.users.getByUsername('mallory'))!;
      expect(mallory.perm.admin).toBe(false);
      expect(mallory.scope).toBe('/users/mallory');
    });

    it('checks password rules with 400 and a message', async () => {
      const short = await t.app.inject({
        method: 'POST',
        url: '/api/signup',
        payload: { username: 'dave', password: 'short' },
      });
      expect(short.statusCode).toBe(400);
      expect(short.body).toBe('400 Bad Request (password is too short, minimum length is 12)\n');
      const easy = await t.app.inject({
        method: 'POST',
        url: '/api/signup',
        payload: { username: 'dave', password: 'password1234' },
      });
      expect(easy.statusCode).toBe(400);
      expect(easy.body).toContain('password is too easy');
      const empty = await t.app.inject({ method: 'POST', url: '/api/signup', payload: {} });
      expect(empty.statusCode).toBe(400);
      expect(await t.ctx.store.users.getByUsername('dave')).toBeUndefined();
    });
  });
});
