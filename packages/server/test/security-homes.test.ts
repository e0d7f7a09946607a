import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startTestApp, type TestApp } from './helpers.js';

/*
 * Class: two accounts sharing one home folder (File Browser's GHSA-7rc3-g7h6-22m7, and
 * GHSA-576v-w77m-gr84 for names differing only in case). Home folder names are many-to-one
 * ("team one" and "team-one" both become "team-one"), so the second account must be refused
 * rather than handed the first one's files.
 */

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
  await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), createUserDir: true });
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

describe('home folders', () => {
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
});
