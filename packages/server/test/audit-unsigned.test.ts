import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ANONYMOUS_RECORDS_PER_ADDRESS, AUDIT_FIELD_LIMITS, AuditLog } from '../src/audit/log.js';
import { TokenUseThrottle } from '../src/audit/token-use.js';
import { openStore } from '../src/store/index.js';
import { startTestApp, type TestApp } from './helpers.js';
import { useAuditApp, t } from './audit-helpers.js';

/**
 * The audit log under requests nobody signed in for (bounded in number, bytes and fields), and its
 * writer: batched, bounded while the database refuses, flushed at shutdown.
 */
useAuditApp();

describe('requests nobody signed in for', () => {
  /** Every record, oldest first, straight from the store (the listing would page). */
  const all = async (app: TestApp) => {
    await app.ctx.audit.flush();
    return (await app.ctx.store.audit.list({}, 100_000)).reverse();
  };
  const bytes = (records: Awaited<ReturnType<typeof all>>) =>
    records.reduce((n, r) => n + Object.values(r).reduce<number>((m, v) => m + String(v).length, 0), 0);
  const basic = (user: string, secret: string) =>
    'Basic ' + Buffer.from(`${user}:${secret}`).toString('base64');
  // A 15 KB path with line breaks, as the flood on the running server sent.
  const longPath = '/dav/' + 'a%0ab%0d'.repeat(2000) + '.txt';

  it('leaves no record of a request refused before any credential was offered', async () => {
    const other = await startTestApp();
    try {
      const before = (await all(other)).length;
      for (let i = 0; i < 200; i++) {
        const res = await other.app.inject({
          method: 'PUT',
          url: longPath,
          payload: 'x',
          remoteAddress: '198.51.100.20',
        });
        expect(res.statusCode).toBe(401);
      }
      for (const [method, url] of [
        ['POST', '/api/resources/x.txt'],
        ['GET', '/api/users'],
        ['DELETE', '/api/trash'],
        ['POST', '/api/tus/a.txt'],
        ['DELETE', '/api/users/1'],
      ] as const) {
        const res = await other.app.inject({ method, url, remoteAddress: '198.51.100.20' });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
      }
      expect((await all(other)).slice(before)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('records a flood of sign-in attempts as a bounded number of records and bytes, then one summary per address', async () => {
    const other = await startTestApp();
    try {
      const before = (await all(other)).length;
      const flood = [
        ...Array.from({ length: 1000 }, () => ({
          method: 'PUT' as const,
          url: longPath,
          headers: { authorization: basic('ghost%0a' + 'x'.repeat(5000), 'wrong') },
        })),
        ...Array.from({ length: 1000 }, () => ({
          method: 'GET' as const,
          url: '/api/resources/',
          headers: { authorization: `Bearer fbt_${'0'.repeat(16)}_${'A'.repeat(43)}` },
        })),
        ...Array.from({ length: 1000 }, () => ({
          method: 'POST' as const,
          url: '/api/login',
          payload: { username: 'ghost\n' + 'y'.repeat(5000), password: 'wrong' },
        })),
      ];
      for (const opts of flood) {
        const res = await other.app.inject({ ...opts, remoteAddress: '198.51.100.30' });
        expect([401, 403, 429]).toContain(res.statusCode);
      }
      const during = (await all(other)).slice(before);
      expect(during.length).toBeLessThanOrEqual(ANONYMOUS_RECORDS_PER_ADDRESS);
      expect(bytes(during)).toBeLessThan(ANONYMOUS_RECORDS_PER_ADDRESS * 2 * 1024);
      // The rest is told in one record when the minute ends (here: when the server closes).
      await other.app.close();
      const after = (await other.ctx.store.audit.list({}, 100_000)).reverse().slice(before);
      const summaries = after.slice(during.length);
      expect(summaries).toHaveLength(1);
      expect(summaries[0]).toMatchObject({ address: '198.51.100.30', action: 'auth.login' });
      expect(summaries[0]!.detail).toBe(
        `${flood.length - during.length} more failed sign-ins from 198.51.100.30 in the last minute`,
      );
    } finally {
      await other.close();
    }
  });

  it('keeps every field within its bound and free of control characters', async () => {
    const other = await startTestApp();
    try {
      const before = (await all(other)).length;
      await other.app.inject({
        method: 'POST',
        url: '/api/login',
        payload: {
          username: 'x\u0000y\u001b[31m\r\n\u0085\u2028\u2029z' + 'n'.repeat(10_000),
          password: 'wrong',
        },
        remoteAddress: '198.51.100.40',
      });
      // A signed-in user's request: its path is long and has line breaks too.
      await other.request(other.adminToken, { method: 'DELETE', url: '/api/resources' + longPath.slice(4) });
      const records = (await all(other)).slice(before);
      expect(records.map((r) => r.action)).toEqual(['auth.login', 'file.delete']);
      for (const r of records) {
        for (const [field, value] of Object.entries(r)) {
          if (typeof value !== 'string') continue;
          // eslint-disable-next-line no-control-regex
          expect(value, field).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
          expect(value.length, field).toBeLessThanOrEqual(
            AUDIT_FIELD_LIMITS[field as keyof typeof AUDIT_FIELD_LIMITS],
          );
        }
      }
      expect(records[0]!.username).toMatch(/^x\uFFFDy\uFFFD\[31m\uFFFD{5}zn+…$/);
      expect(records[1]!.path.startsWith('/a\uFFFDb\uFFFD')).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('records failed WebDAV Basic and API token sign-ins as it records failed logins', async () => {
    const other = await startTestApp();
    try {
      const before = (await all(other)).length;
      const from = '198.51.100.50';
      const token = `fbt_${'1'.repeat(16)}_${'B'.repeat(43)}`;
      const answers = [
        await other.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: 'admin', password: 'wrong' },
          remoteAddress: from,
        }),
        await other.app.inject({
          method: 'PROPFIND',
          url: '/dav/',
          headers: { authorization: basic('admin', 'wrong'), depth: '0' },
          remoteAddress: from,
        }),
        await other.app.inject({
          method: 'PROPFIND',
          url: '/dav/',
          headers: { authorization: basic('admin', token), depth: '0' },
          remoteAddress: from,
        }),
        await other.app.inject({
          method: 'GET',
          url: '/api/resources/',
          headers: { authorization: `Bearer ${token}` },
          remoteAddress: from,
        }),
        // A token's secret typed where the username goes is named by its public part only.
        await other.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: token, password: 'x' },
          remoteAddress: from,
        }),
        await other.app.inject({
          method: 'PROPFIND',
          url: '/dav/',
          headers: { authorization: basic(token, token), depth: '0' },
          remoteAddress: from,
        }),
        await other.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: ` \u200balice ${token}`, password: 'x' },
          remoteAddress: from,
        }),
      ];
      expect(answers.map((a) => a.statusCode)).toEqual([403, 401, 401, 401, 403, 401, 403]);
      expect(
        (await all(other)).slice(before).map(({ action, username, userId, address, status, detail }) => ({
          action,
          username,
          userId,
          address,
          status,
          detail,
        })),
      ).toEqual([
        { action: 'auth.login', username: 'admin', userId: 0, address: from, status: 403, detail: '' },
        { action: 'auth.login', username: 'admin', userId: 0, address: from, status: 401, detail: 'webdav' },
        {
          action: 'auth.login',
          username: 'admin',
          userId: 0,
          address: from,
          status: 401,
          detail: `webdav, API token ${'1'.repeat(16)}`,
        },
        {
          action: 'auth.login',
          username: `fbt_${'1'.repeat(16)}`,
          userId: 0,
          address: from,
          status: 401,
          detail: `API token ${'1'.repeat(16)}`,
        },
        {
          action: 'auth.login',
          username: `fbt_${'1'.repeat(16)}`,
          userId: 0,
          address: from,
          status: 403,
          detail: '',
        },
        {
          action: 'auth.login',
          username: `fbt_${'1'.repeat(16)}`,
          userId: 0,
          address: from,
          status: 401,
          detail: `webdav, API token ${'1'.repeat(16)}`,
        },
        {
          action: 'auth.login',
          username: ` \u200balice fbt_${'1'.repeat(16)}`,
          userId: 0,
          address: from,
          status: 403,
          detail: '',
        },
      ]);
      expect(JSON.stringify(await all(other))).not.toContain('B'.repeat(43));
    } finally {
      await other.close();
    }
  });
});

describe('the writer', () => {
  it('writes a full batch on the next turn of the event loop, not per record', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-log-'));
    const store = await openStore(path.join(base, 'fb.db'));
    try {
      const log = new AuditLog(store.audit, t.ctx.log, { batchSize: 3, flushMs: 3_600_000 });
      const rec = (n: number) => ({ ...sample, path: `/${n}` });
      log.record(rec(1));
      log.record(rec(2));
      expect(await store.audit.list({}, 10)).toHaveLength(0);
      log.record(rec(3));
      expect(await store.audit.list({}, 10)).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect((await store.audit.list({}, 10)).map((r) => r.path)).toEqual(['/3', '/2', '/1']);
      log.record(rec(4));
      await log.close();
      expect(await store.audit.list({}, 10)).toHaveLength(4);
    } finally {
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });

  it('holds records while the database refuses them, up to its bound, dropping the oldest', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-log-'));
    const store = await openStore(path.join(base, 'fb.db'));
    try {
      const log = new AuditLog(store.audit, t.ctx.log, { batchSize: 100, flushMs: 3_600_000, maxQueued: 3 });
      await sql`ALTER TABLE audit_log RENAME TO audit_log_away`.execute(store.sql);
      for (let n = 1; n <= 5; n++) log.record({ ...sample, path: `/${n}` });
      await log.flush();
      await sql`ALTER TABLE audit_log_away RENAME TO audit_log`.execute(store.sql);
      await log.flush();
      expect((await store.audit.list({}, 10)).map((r) => r.path)).toEqual(['/5', '/4', '/3']);
      await log.close();
    } finally {
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });

  it('writes what is queued when the app closes (the shutdown path)', async () => {
    const other = await startTestApp();
    try {
      await other.request(other.adminToken, { method: 'POST', url: '/api/resources/closing/' });
      await other.app.close();
      expect(await other.ctx.store.audit.list({ action: 'file.create' }, 10)).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('writes sixty refused requests of a signed-in user a minute, then one summary; what users did, always', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-log-'));
    const store = await openStore(path.join(base, 'fb.db'));
    try {
      const log = new AuditLog(store.audit, t.ctx.log, { flushMs: 3_600_000 });
      const minute = 1_000_000;
      const long = '/' + 'x'.repeat(3_700);
      for (let n = 0; n < 2_000; n++) {
        log.record(
          { ...sample, userId: 7, username: 'carol', status: 404, action: 'file.delete', path: long },
          minute,
        );
      }
      for (let n = 0; n < 100; n++)
        log.record({ ...sample, userId: 7, username: 'carol', path: `/${n}` }, minute);
      log.record({ ...sample, userId: 8, username: 'dave', status: 403 }, minute);
      log.record({ ...sample, userId: 8, username: 'dave', status: 403 }, minute + 60_000);
      await log.flush();
      const records = await store.audit.list({}, 100_000);
      expect(
        records.filter((r) => r.username === 'carol' && r.status === 404 && r.path === long),
      ).toHaveLength(60);
      expect(records.filter((r) => r.username === 'carol' && r.status === 200)).toHaveLength(100);
      expect(records.filter((r) => r.detail !== '').map((r) => r.detail)).toEqual([
        '1940 more refused requests by carol in the last minute',
      ]);
      expect(records.filter((r) => r.username === 'dave')).toHaveLength(2);
      await log.close();
    } finally {
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });

  it('writes at most 151 records a minute of requests nobody signed in for, from however many addresses', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-audit-log-'));
    const store = await openStore(path.join(base, 'fb.db'));
    try {
      const log = new AuditLog(store.audit, t.ctx.log, { flushMs: 3_600_000 });
      const attempt = (address: string) => ({
        ...sample,
        userId: 0,
        username: 'x',
        address,
        status: 403,
        action: 'auth.login' as const,
      });
      const minute = 1_000_000;
      for (let a = 0; a < 500; a++) {
        for (let n = 0; n < 20; n++) log.record(attempt(`10.0.${a >> 8}.${a & 255}`), minute);
      }
      // The next minute's first record brings the summaries of the one before.
      log.record(attempt('192.0.2.1'), minute + 60_000);
      await log.flush();
      const records = (await store.audit.list({}, 100_000)).reverse();
      expect(records).toHaveLength(100 + 50 + 1 + 1);
      expect(records.slice(0, 100).every((r) => r.detail === '')).toBe(true);
      const summaries = records.slice(100, 151);
      expect(summaries[0]!.detail).toBe('10 more failed sign-ins from 10.0.0.0 in the last minute');
      expect(summaries[10]!.detail).toBe('20 more failed sign-ins from 10.0.0.10 in the last minute');
      expect(summaries[50]).toMatchObject({
        address: '',
        detail: '9000 more requests nobody signed in for, from 450 other addresses in the last minute',
      });
      expect(records[151]).toMatchObject({ address: '192.0.2.1', detail: '' });
      await log.close();
    } finally {
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });

  it('throttles token uses per token', () => {
    const throttle = new TokenUseThrottle(1000);
    expect(throttle.due('a', 0)).toBe(true);
    expect(throttle.due('a', 999)).toBe(false);
    expect(throttle.due('b', 999)).toBe(true);
    expect(throttle.due('a', 1000)).toBe(true);
  });
});

const sample = {
  time: 1,
  userId: 1,
  username: 'u',
  address: '',
  action: 'file.modify' as const,
  path: '/',
  destination: '',
  status: 200,
  detail: '',
};
