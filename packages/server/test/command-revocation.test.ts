import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ALL } from './files-helpers.js';
import { ADMIN_PASSWORD, startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';

/**
 * A running command keeps no right past the moment it is withdrawn: a command that started while
 * its caller could run it is stopped once the session behind it ends, the API token behind it is
 * revoked, *execute* is taken away or the user is deleted, whether it prints anything or not.
 */

let t: TestApp;
let url: string;
let bin: string;

const BOB = {
  username: 'bob',
  scope: '/bob',
  perm: { ...ALL, execute: true },
  // `waiter` prints "started", then waits without a word: only a check from outside stops it.
  commands: ['waiter'],
};

beforeAll(async () => {
  bin = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-revoke-bin-'));
  await fs.writeFile(path.join(bin, 'waiter'), '#!/bin/sh\necho started\nexec sleep 600\n', { mode: 0o755 });
  t = await startTestApp({ disableExec: false, execPath: `${bin}:/usr/bin:/bin`, execTimeLimit: 900 });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/command/`;
});

afterAll(async () => {
  await t.close();
  await fs.rm(bin, { recursive: true, force: true });
});

interface Ended {
  lines: string[];
  code: number;
  reason: string;
}

/** Runs `waiter` as `auth`; once it said "started", `withdraw` runs; resolves when the socket closes. */
function runThenWithdraw(auth: Record<string, string>, withdraw: () => Promise<void>): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: auth });
    const lines: string[] = [];
    ws.on('open', () => ws.send('waiter'));
    ws.on('message', (data) => {
      const line = (data as Buffer).toString('utf8');
      lines.push(line);
      if (line === 'started') withdraw().catch(reject);
    });
    ws.on('close', (code, reason) => resolve({ lines, code, reason: reason.toString() }));
    ws.on('error', reject);
  });
}

const sessionOf = (token: string): string =>
  (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;

describe('a running command is stopped once its caller may no longer run it', () => {
  it('when the session it runs in ends', async () => {
    const user = await t.createUser({ ...BOB, username: 'bob-session' });
    const token = await t.login(user.username);
    const ended = await runThenWithdraw({ 'x-auth': token }, async () => {
      await t.ctx.auth.logout(sessionOf(token), user.id);
    });
    expect(ended).toEqual({
      lines: ['started', 'Command stopped: the session it was started in has ended.'],
      code: 1008,
      reason: 'stopped: access withdrawn',
    });
  });

  it('when the API token it runs with is revoked', async () => {
    const user = await t.createUser({ ...BOB, username: 'bob-token' });
    const session = await t.login(user.username);
    const made = await t.request(session, {
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'runner', expiresInDays: 0, readOnly: false, current_password: USER_PASSWORD },
    });
    expect(made.statusCode, made.body).toBe(201);
    const { id, secret } = made.json() as { id: string; secret: string };
    const ended = await runThenWithdraw({ authorization: `Bearer ${secret}` }, async () => {
      const revoked = await t.request(session, { method: 'DELETE', url: `/api/tokens/${id}` });
      expect(revoked.statusCode).toBe(200);
    });
    expect(ended.lines[0]).toBe('started');
    expect(ended.lines[1]).toMatch(/^Command stopped: .*revoked.*\.$/);
    expect(ended.code).toBe(1008);
  });

  it('when the execute permission is taken away', async () => {
    const user = await t.createUser({ ...BOB, username: 'bob-perm' });
    const token = await t.login(user.username);
    const ended = await runThenWithdraw({ 'x-auth': token }, async () => {
      const res = await t.updateUser(user.id, ['perm'], { perm: { ...BOB.perm, execute: false } });
      expect(res.statusCode, res.body).toBe(200);
    });
    expect(ended.lines[0]).toBe('started');
    expect(ended.lines[1]).toMatch(/^Command stopped: .+\.$/);
    expect(ended.code).toBe(1008);
  });

  it('when the user is deleted', async () => {
    const user = await t.createUser({ ...BOB, username: 'bob-deleted' });
    const token = await t.login(user.username);
    const ended = await runThenWithdraw({ 'x-auth': token }, async () => {
      const res = await t.request(t.adminToken, {
        method: 'DELETE',
        url: `/api/users/${user.id}`,
        payload: { current_password: ADMIN_PASSWORD },
      });
      expect(res.statusCode, res.body).toBe(200);
    });
    expect(ended.lines[0]).toBe('started');
    expect(ended.lines[1]).toMatch(/^Command stopped: .+\.$/);
    expect(ended.code).toBe(1008);
  });
});
