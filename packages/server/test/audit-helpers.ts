import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AuditEntry, AuditPage, Permissions } from '@filebrowser/contract';
import { afterAll, beforeAll, expect } from 'vitest';
import { ALL_PERMISSIONS } from '../src/store/users.js';
import { startTestApp, type TestApp } from './helpers.js';

/** What the audit log's tests share: one app for the file, the user alice, and reads of the log. */

export let t: TestApp;
export let alice: string;
export let aliceId: number;
export let bin: string;
export const USER_PERM: Permissions = { ...ALL_PERMISSIONS, admin: false };

export async function audit(query: Record<string, string> = {}, token = t.adminToken): Promise<AuditPage> {
  const res = await t.request(token, { method: 'GET', url: '/api/audit', query });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<AuditPage>();
}

/** The newest record of an action (of a user, when given). */
export async function last(action: string, user?: string): Promise<AuditEntry> {
  const page = await audit({ action, ...(user !== undefined && { user }), limit: '1' });
  expect(page.items, `a record of ${action}`).toHaveLength(1);
  return page.items[0]!;
}

export async function count(action: string, user?: string): Promise<number> {
  return (await audit({ action, ...(user !== undefined && { user }), limit: '1000' })).items.length;
}

export const as = (token: string, method: string, url: string, payload?: unknown, headers = {}) =>
  t.request(token, {
    method: method as 'GET',
    url,
    headers,
    ...(payload !== undefined && { payload: payload as string }),
  });

/**
 * Starts the app (with a runner program and the user alice) before the file's tests, and closes it
 * after them.
 */
export function useAuditApp(): void {
  beforeAll(async () => {
    bin = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-bin-'));
    await fs.writeFile(path.join(bin, 'hello'), '#!/bin/sh\necho hello\n', { mode: 0o755 });
    t = await startTestApp({ disableExec: false, execPath: `${bin}:/usr/bin:/bin` });
    const user = await t.createUser({
      username: 'alice',
      scope: '/alice',
      perm: USER_PERM,
      commands: ['hello'],
    });
    aliceId = user.id;
    alice = await t.login('alice');
  });
  afterAll(async () => {
    await t.close();
    await fs.rm(bin, { recursive: true, force: true });
  });
}
