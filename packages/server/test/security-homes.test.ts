import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startTestApp, type TestApp } from './helpers.js';

/*
 * Class: two accounts sharing one home folder (File Browser's GHSA-7rc3-g7h6-22m7, and
 * GHSA-576v-w77m-gr84 for names differing only in case). Home folder names are many-to-one
 * ("team one" and "team-one" both become "team-one"), so the second account must be refused
 * rather than handed the first one's files. Sharing covers a home holding another user's scope
 * or lying inside it too (eighth attack pass, F4).
 */

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
  await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), createUserDir: true, signup: true });
});
afterEach(() => t.close());

function create(username: string) {
  return t.request(t.adminToken, {
    method: 'POST',
    url: '/api/users',
    payload: {
      what: 'user',
      which: [],
      current_password: ADMIN_PASSWORD,
      data: { username, password: 'a-long-enough-password', scope: '' },
    },
  });
}

function signup(username: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/signup',
    payload: { username, password: 'a-long-enough-password' },
  });
}

/** The sign-up of `username` was refused with 409 and `message`, and made no account. */
async function refused(username: string, message: string): Promise<void> {
  const users = (await t.ctx.store.users.list()).length;
  const res = await signup(username);
  expect(res.statusCode, res.body).toBe(409);
  expect(res.body).toBe(`409 Conflict (${message})\n`);
  expect(await t.ctx.store.users.getByUsername(username)).toBeUndefined();
  expect(await t.ctx.store.users.list()).toHaveLength(users);
}

describe('home folders', () => {
  it('refuses a sign-up whose home lies inside a scope reached through a link, creating nothing', async () => {
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), userHomeBasePath: '/homes' });
    fs.mkdirSync(path.join(t.root, 'homes'));
    // carol's scope is a link to the homes' folder: written apart, it leads to the same place.
    fs.symlinkSync('homes', path.join(t.root, 'hl'));
    await t.createUser({ username: 'carol', scope: '/hl' });
    await refused('erin', 'this home folder lies inside another user’s folder');
    expect(fs.readdirSync(path.join(t.root, 'homes'))).toEqual([]);
  });

  it.each([
    ['team one', 'team-one'],
    ['Team One', 'team-one'],
  ])('refuses %j once %j owns the same home folder, with 409, storing nothing', async (second, first) => {
    expect((await create(first)).statusCode).toBe(201);
    fs.writeFileSync(path.join(t.root, 'users', 'team-one', 'mine.txt'), 'first');
    const users = (await t.ctx.store.users.list()).length;
    const res = await create(second);
    expect(res.statusCode).toBe(409);
    expect(res.body).toBe('409 Conflict (another user already owns this home folder)\n');
    expect(await t.ctx.store.users.list()).toHaveLength(users);
    expect(fs.readdirSync(path.join(t.root, 'users'))).toEqual(['team-one']);
  });

  it.each([
    ['team', '/users', '/users/team/alice', false],
    ['team', '/users', '/users/team/alice', true],
    ['users', '/', '/users/bob', false],
    ['shared', '/', '/shared/projects', false],
  ])(
    'refuses the sign-up %j under %j whose home would hold the scope %j (admin: %j), creating nothing',
    async (username, base, scope, admin) => {
      await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), userHomeBasePath: base });
      await t.createUser({
        username: 'owner',
        scope,
        perm: { ...t.ctx.store.settings.get().defaults.perm, admin },
      });
      const owned = path.join(t.root, scope, 'private.txt');
      fs.writeFileSync(owned, 'not yours');
      const before = fs.readdirSync(path.join(t.root, base));
      await refused(username, 'this home folder would hold another user’s folder');
      expect(fs.readdirSync(path.join(t.root, base))).toEqual(before);
      expect(fs.readFileSync(owned, 'utf8')).toBe('not yours');
    },
  );

  it('refuses a sign-up whose home lies inside an ordinary user’s scope, creating nothing', async () => {
    await t.createUser({ username: 'overseer', scope: '/users' });
    await refused('carol', 'this home folder lies inside another user’s folder');
    expect(fs.readdirSync(path.join(t.root, 'users'))).toEqual([]);
  });

  it('lets a home lie inside an administrator’s scope: the whole root blocks no sign-up', async () => {
    await t.createUser({
      username: 'root2',
      scope: '/',
      perm: { ...t.ctx.store.settings.get().defaults.perm, admin: true },
    });
    const res = await signup('carol');
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.ctx.store.users.getByUsername('carol'))!.scope).toBe('/users/carol');
  });

  it('refuses a sign-up whose home a deleted account left holding files, with 409, creating nothing', async () => {
    const victim = await t.createUser({ username: 'victi.m', scope: '' });
    const home = path.join(t.root, 'users', 'victi.m');
    fs.writeFileSync(path.join(home, 'tax.txt'), 'secret');
    const gone = await t.request(t.adminToken, {
      method: 'DELETE',
      url: `/api/users/${victim.id}`,
      payload: { current_password: ADMIN_PASSWORD },
    });
    expect(gone.statusCode).toBe(200);
    await refused(
      'vi..cti.m',
      'the home folder for this username already exists and holds files: an administrator can remove or rename it',
    );
    expect(fs.readdirSync(home)).toEqual(['tax.txt']);
  });

  it('gives a sign-up its home folder when the folder is there but empty', async () => {
    fs.mkdirSync(path.join(t.root, 'users', 'carol'), { recursive: true });
    const res = await signup('carol');
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.ctx.store.users.getByUsername('carol'))!.scope).toBe('/users/carol');
  });

  it('gives one home to one of parallel sign-ups that map to it, refusing the others with 409', async () => {
    const names = ['race1', 'ra..ce1', 'r..ace1', 'rac..e1'];
    const answers = await Promise.all(names.map(signup));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409, 409, 409]);
    for (const a of answers.filter((a) => a.statusCode === 409)) {
      expect(a.body).toBe('409 Conflict (another user already owns this home folder)\n');
    }
    const owners = (await t.ctx.store.users.list()).filter((u) => u.scope === '/users/race1');
    expect(owners).toHaveLength(1);
    expect(answers[names.indexOf(owners[0]!.username)]!.statusCode).toBe(200);
  });
});
