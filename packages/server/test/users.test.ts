import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { ALL_PERMISSIONS } from '../src/store/users.js';
import { ADMIN_PASSWORD, startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await t.close();
});

const newUser = (data: Record<string, unknown>, current = ADMIN_PASSWORD) => ({
  what: 'user',
  which: [],
  current_password: current,
  data: { username: 'erin', password: 'erins-secret-password', ...data },
});

describe('GET /api/users', () => {
  it('lists users without password hashes, for admins only', async () => {
    await t.createUser({ username: 'bob' });
    const res = await t.request(t.adminToken, { method: 'GET', url: '/api/users' });
    expect(res.statusCode).toBe(200);
    const users = res.json();
    expect(users.map((u: { username: string }) => u.username)).toEqual(['admin', 'bob']);
    expect(users.every((u: { password: string }) => u.password === '')).toBe(true);
    expect(res.body).not.toContain('$2');
    const bob = await t.login('bob');
    expect((await t.request(bob, { method: 'GET', url: '/api/users' })).statusCode).toBe(403);
    expect((await t.request(undefined, { method: 'GET', url: '/api/users' })).statusCode).toBe(401);
  });

  it('shows a user to themselves without the scope, and refuses others', async () => {
    const bob = await t.createUser({ username: 'bob', scope: '/bob' });
    const token = await t.login('bob');
    const self = await t.request(token, { method: 'GET', url: `/api/users/${bob.id}` });
    expect(self.statusCode).toBe(200);
    expect(self.json()).toMatchObject({ username: 'bob', scope: '', password: '' });
    expect((await t.request(token, { method: 'GET', url: '/api/users/1' })).statusCode).toBe(403);
    const admin = await t.request(t.adminToken, { method: 'GET', url: `/api/users/${bob.id}` });
    expect(admin.json().scope).toBe('/bob');
    expect((await t.request(t.adminToken, { method: 'GET', url: '/api/users/999' })).statusCode).toBe(404);
  });

  it('answers 404 for ids that are not numbers, as for any unknown API path', async () => {
    for (const [method, url] of [
      ['GET', '/api/users/abc'],
      ['GET', '/api/users/'],
      ['PUT', '/api/users/1x'],
      ['DELETE', '/api/users/-1'],
    ] as const) {
      const res = await t.request(t.adminToken, { method, url, payload: {} });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.body).toBe('404 Not Found\n');
    }
  });
});

describe('POST /api/users', () => {
  it('creates a user with 201 and a Location header, and creates the scope folder', async () => {
    const res = await t.request(t.adminToken, {
      method: 'POST',
      url: '/api/users',
      payload: newUser({ scope: '/erin' }),
    });
    expect(res.statusCode).toBe(201);
    expect(res.body).toBe('201 Created\n');
    const id = (await t.ctx.store.users.getByUsername('erin'))!.id;
    expect(res.headers.location).toBe(`/settings/users/${id}`);
    expect(fs.statSync(path.join(t.root, 'erin')).isDirectory()).toBe(true);
    await t.login('erin', 'erins-secret-password');
  });

  it('answers 409 for a duplicate username (the old server answered 500)', async () => {
    await t.createUser({ username: 'Erin' });
    const res = await t.request(t.adminToken, { method: 'POST', url: '/api/users', payload: newUser({}) });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('already exists');
  });

  it('validates the request and leaves nothing behind', async () => {
    const cases: [unknown, number, string][] = [
      [{ ...newUser({}), what: 'share' }, 400, 'what must be "user"'],
      [{ ...newUser({}), which: ['all'] }, 400, 'which must be empty'],
      [newUser({}, 'not-my-password'), 400, 'the current password is incorrect'],
      [newUser({ password: '' }), 400, 'password is required'],
      [newUser({ password: 'short' }), 400, 'password is too short'],
      [
        newUser({
          perm: {
            admin: false,
            execute: false,
            create: true,
            rename: true,
            modify: true,
            delete: true,
            share: true,
            download: false,
          },
        }),
        400,
        'permission to share requires permission to download',
      ],
      [newUser({ uploadsLimit: 11 }), 400, 'uploadsLimit'],
      [
        newUser({ rules: [{ regex: true, allow: false, path: '', regexp: { raw: '(' } }] }),
        400,
        'rule 1 has an invalid regular expression',
      ],
      [newUser({ viewMode: 42 }), 400, 'viewMode'],
      [newUser({ scope: '/../../etc' }), 400, 'scope must stay inside'],
      [newUser({ username: '' }), 400, 'username is required'],
    ];
    for (const [payload, status, message] of cases) {
      const res = await t.request(t.adminToken, {
        method: 'POST',
        url: '/api/users',
        payload: payload as object,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.body).toContain(message);
    }
    expect((await t.ctx.store.users.list()).map((u) => u.username)).toEqual(['admin']);
  });

  it('gives new users their own home when createUserDir is on and the scope is empty', async () => {
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...s, createUserDir: true });
    const res = await t.request(t.adminToken, {
      method: 'POST',
      url: '/api/users',
      payload: newUser({ username: 'Frank Zappa', scope: '' }),
    });
    expect(res.statusCode).toBe(201);
    expect((await t.ctx.store.users.getByUsername('frank zappa'))!.scope).toBe('/users/Frank-Zappa');
    expect(fs.existsSync(path.join(t.root, 'users', 'Frank-Zappa'))).toBe(true);
  });
});

describe('PUT /api/users/{id}', () => {
  it('lets users change their own preferences but not their permissions or scope', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    const ok = await t.request(token, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: {
        what: 'user',
        which: ['viewMode', 'sorting'],
        data: { id: bob.id, viewMode: 'list', sorting: { by: 'size', asc: true } },
      },
    });
    expect(ok.statusCode).toBe(200);
    expect(await t.ctx.store.users.get(bob.id)).toMatchObject({
      viewMode: 'list',
      sorting: { by: 'size', asc: true },
    });
    for (const which of ['perm', 'scope', 'rules', 'username']) {
      const res = await t.request(token, {
        method: 'PUT',
        url: `/api/users/${bob.id}`,
        payload: {
          what: 'user',
          which: [which],
          current_password: USER_PASSWORD,
          data: { id: bob.id, perm: { ...bob.perm, admin: true }, scope: '/', rules: [], username: 'root' },
        },
      });
      expect(res.statusCode, which).toBe(403);
    }
    const all = await t.request(token, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: { what: 'user', which: ['all'], current_password: USER_PASSWORD, data: { id: bob.id } },
    });
    expect(all.statusCode).toBe(403);
    expect((await t.ctx.store.users.get(bob.id))!.perm.admin).toBe(false);
  });

  it('needs the current password for a password change, and refuses it when locked', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    const body = (current?: string) => ({
      what: 'user',
      which: ['password'],
      ...(current !== undefined && { current_password: current }),
      data: { id: bob.id, password: 'the-next-password-1' },
    });
    for (const current of [undefined, 'wrong-password-here']) {
      const res = await t.request(token, {
        method: 'PUT',
        url: `/api/users/${bob.id}`,
        payload: body(current),
      });
      expect(res.statusCode).toBe(400);
      expect(res.body).toBe('400 Bad Request (the current password is incorrect)\n');
    }
    const locked = await t.createUser({ username: 'lock', lockPassword: true });
    const lockToken = await t.login('lock');
    const res = await t.request(lockToken, {
      method: 'PUT',
      url: `/api/users/${locked.id}`,
      payload: { ...body(USER_PASSWORD), data: { id: locked.id, password: 'the-next-password-1' } },
    });
    expect(res.statusCode).toBe(403);
  });

  it('refuses an id mismatch, a foreign user and an unknown field', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    const mismatch = await t.request(token, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: { what: 'user', which: ['locale'], data: { id: 1, locale: 'de' } },
    });
    expect(mismatch.statusCode).toBe(400);
    const foreign = await t.request(token, {
      method: 'PUT',
      url: '/api/users/1',
      payload: { what: 'user', which: ['locale'], data: { id: 1, locale: 'de' } },
    });
    expect(foreign.statusCode).toBe(403);
    const unknown = await t.request(token, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: { what: 'user', which: ['passwordHash'], data: { id: bob.id } },
    });
    expect(unknown.statusCode).toBe(400);
    expect((await t.ctx.store.users.get(1))!.locale).toBe('en');
  });

  it('lets an admin replace a user with which ["all"], keeping the password when blank', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const { password: _p, ...data } = (
      await t.request(t.adminToken, { method: 'GET', url: `/api/users/${bob.id}` })
    ).json();
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: {
        what: 'user',
        which: ['all'],
        current_password: ADMIN_PASSWORD,
        data: { ...data, scope: '/bob', password: '', commands: ['ls', 'echo'] },
      },
    });
    expect(res.statusCode).toBe(200);
    expect(await t.ctx.store.users.get(bob.id)).toMatchObject({ scope: '/bob', commands: ['ls', 'echo'] });
    await t.login('bob');
  });

  it('never lets the last admin be demoted', async () => {
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: '/api/users/1',
      payload: {
        what: 'user',
        which: ['perm'],
        current_password: ADMIN_PASSWORD,
        data: {
          id: 1,
          perm: {
            admin: false,
            execute: true,
            create: true,
            rename: true,
            modify: true,
            delete: true,
            share: true,
            download: true,
          },
        },
      },
    });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('last administrator');
    expect((await t.ctx.store.users.get(1))!.perm.admin).toBe(true);
  });

  it('answers 409 when renaming onto an existing username', async () => {
    const bob = await t.createUser({ username: 'bob' });
    await t.createUser({ username: 'carol' });
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: `/api/users/${bob.id}`,
      payload: {
        what: 'user',
        which: ['username'],
        current_password: ADMIN_PASSWORD,
        data: { id: bob.id, username: 'CAROL' },
      },
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toBe('409 Conflict (a user with this username already exists)\n');
    expect((await t.ctx.store.users.get(bob.id))!.username).toBe('bob');
  });

  it('refuses an invalid regular expression in a user rule with 400 naming the rule', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const rules = [
      { regex: false, allow: false, path: '/private', regexp: { raw: '' } },
      { regex: true, allow: false, path: '', regexp: { raw: '\\.(jpg|png' } },
    ];
    for (const which of [['rules'], ['all']]) {
      const res = await t.request(t.adminToken, {
        method: 'PUT',
        url: `/api/users/${bob.id}`,
        payload: {
          what: 'user',
          which,
          current_password: ADMIN_PASSWORD,
          data: { ...bob, password: '', rules },
        },
      });
      expect(res.statusCode, which.join()).toBe(400);
      expect(res.body).toBe('400 Bad Request (user rule 2 has an invalid regular expression: \\.(jpg|png)\n');
    }
    expect((await t.ctx.store.users.get(bob.id))!.rules).toEqual([]);
  });

  it('checks the uploads limit on updates (1 to 10)', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    const put = (uploadsLimit: number) =>
      t.request(token, {
        method: 'PUT',
        url: `/api/users/${bob.id}`,
        payload: { what: 'user', which: ['uploadsLimit'], data: { id: bob.id, uploadsLimit } },
      });
    for (const bad of [0, 11]) {
      const res = await put(bad);
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('uploadsLimit');
    }
    expect((await put(10)).statusCode).toBe(200);
    expect((await t.ctx.store.users.get(bob.id))!.uploadsLimit).toBe(10);
  });

  it('never lets the last admin be demoted by a full replacement either', async () => {
    const { password: _p, ...admin } = (
      await t.request(t.adminToken, { method: 'GET', url: '/api/users/1' })
    ).json();
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: '/api/users/1',
      payload: {
        what: 'user',
        which: ['all'],
        current_password: ADMIN_PASSWORD,
        data: { ...admin, password: '', perm: { ...admin.perm, admin: false } },
      },
    });
    expect(res.statusCode).toBe(403);
    expect(res.body).toBe('403 Forbidden (the last administrator cannot be demoted)\n');
    // With a second admin, the first may step down.
    await t.createUser({ username: 'second', perm: { ...ALL_PERMISSIONS } });
    const again = await t.request(t.adminToken, {
      method: 'PUT',
      url: '/api/users/1',
      payload: {
        what: 'user',
        which: ['all'],
        current_password: ADMIN_PASSWORD,
        data: { ...admin, password: '', perm: { ...admin.perm, admin: false } },
      },
    });
    expect(again.statusCode).toBe(200);
    expect((await t.ctx.store.users.get(1))!.perm.admin).toBe(false);
  });
});

describe('DELETE /api/users/{id}', () => {
  it('needs a body with the current password', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const none = await t.request(t.adminToken, { method: 'DELETE', url: `/api/users/${bob.id}` });
    expect(none.statusCode).toBe(400);
    expect(none.body).toBe('400 Bad Request (a JSON body is required)\n');
    const wrong = await t.request(t.adminToken, {
      method: 'DELETE',
      url: `/api/users/${bob.id}`,
      payload: { current_password: 'nope' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toBe('400 Bad Request (the current password is incorrect)\n');
    expect(await t.ctx.store.users.get(bob.id)).toBeDefined();
  });

  it('refuses to delete the last admin, and 404s unknown users', async () => {
    const last = await t.request(t.adminToken, {
      method: 'DELETE',
      url: '/api/users/1',
      payload: { current_password: ADMIN_PASSWORD },
    });
    expect(last.statusCode).toBe(403);
    expect(last.body).toBe('403 Forbidden (the last administrator cannot be deleted)\n');
    expect(await t.ctx.store.users.get(1)).toBeDefined();
    const unknown = await t.request(t.adminToken, {
      method: 'DELETE',
      url: '/api/users/77',
      payload: { current_password: ADMIN_PASSWORD },
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('lets users delete their own account but nobody else', async () => {
    const bob = await t.createUser({ username: 'bob' });
    const carol = await t.createUser({ username: 'carol' });
    const token = await t.login('bob');
    const other = await t.request(token, {
      method: 'DELETE',
      url: `/api/users/${carol.id}`,
      payload: { current_password: USER_PASSWORD },
    });
    expect(other.statusCode).toBe(403);
    const self = await t.request(token, {
      method: 'DELETE',
      url: `/api/users/${bob.id}`,
      payload: { current_password: USER_PASSWORD },
    });
    expect(self.statusCode).toBe(200);
    expect(await t.ctx.store.users.get(bob.id)).toBeUndefined();
  });
});
