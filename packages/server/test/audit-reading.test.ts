import type { AuditEntry } from '@filebrowser/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { purgeExpiredAudit } from '../src/audit/retention.js';
import { useAuditApp, t, alice, audit, count, as } from './audit-helpers.js';

/**
 * The audit log as administrators read it: listed, filtered and paged, exported as CSV and JSON,
 * closed to everyone else, and purged past its retention.
 */
useAuditApp();

describe('listing, filters and paging', () => {
  beforeAll(async () => {
    // Records at known times, written through the same queue as requests'.
    const base = Date.UTC(2020, 0, 1);
    for (let i = 0; i < 25; i++) {
      t.ctx.audit.record({
        time: base + i * 1000,
        // A user's (records of nobody signed in are throttled per address: audit/log.ts).
        userId: 9999,
        username: 'filter-user',
        address: '192.0.2.1',
        action: 'file.modify',
        path: i % 2 ? `/proj/f${i}.txt` : `/project/f${i}.txt`,
        destination: i === 4 ? '/proj/moved.txt' : '',
        status: 200,
        detail: '',
      });
    }
  });

  it('filters by user, action, path prefix (source or destination) and time range', async () => {
    const mine = await audit({ user: 'filter-user', limit: '1000' });
    expect(mine.items).toHaveLength(25);
    const proj = await audit({ user: 'filter-user', path: '/proj', limit: '1000' });
    // `/proj` is a folder: `/project/...` is not below it, except the one moved into it.
    expect(
      proj.items.map((e) => e.path).every((p) => p.startsWith('/proj/') || p === '/project/f4.txt'),
    ).toBe(true);
    expect(proj.items).toHaveLength(13);
    const base = Date.UTC(2020, 0, 1);
    const range = await audit({ user: 'filter-user', from: String(base + 5000), to: String(base + 10_000) });
    expect(range.items.map((e) => e.time)).toEqual([9, 8, 7, 6, 5].map((s) => base + s * 1000));
    expect((await audit({ user: 'filter-user', action: 'file.delete' })).items).toHaveLength(0);
    expect((await audit({ user: 'nobody-by-this-name' })).items).toHaveLength(0);
  });

  it('pages newest first with a cursor', async () => {
    const seen: number[] = [];
    let cursor = '';
    for (let pages = 0; pages < 10; pages++) {
      const page = await audit({ user: 'filter-user', limit: '10', ...(cursor && { cursor }) });
      seen.push(...page.items.map((e) => e.id));
      cursor = page.next;
      if (!cursor) break;
    }
    expect(seen).toHaveLength(25);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);
    expect(new Set(seen).size).toBe(25);
  });

  it('refuses bad filters with 400', async () => {
    const queries: Record<string, string>[] = [
      { limit: '0' },
      { limit: '5000' },
      { action: 'file.explode' },
      { from: 'yesterday' },
      { path: 'relative' },
    ];
    for (const query of queries) {
      const res = await t.request(t.adminToken, { method: 'GET', url: '/api/audit', query });
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
    }
  });
});

describe('export', () => {
  it('CSV, with cells a spreadsheet would run as formulas defused', async () => {
    for (const name of ['=HYPERLINK("http://x")', '+1', '-2', '@SUM(A1)']) {
      await t.app.inject({
        method: 'POST',
        url: '/api/login',
        payload: { username: name, password: 'nope' },
      });
    }
    const res = await t.request(t.adminToken, {
      method: 'GET',
      url: '/api/audit/export',
      query: { format: 'csv', action: 'auth.login' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="audit-.*\.csv"$/);
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,time,user,userID,address,action,path,destination,result,status,detail');
    expect(lines.some((l) => l.includes(`"'=HYPERLINK(""http://x"")"`))).toBe(true);
    for (const cell of [",'+1,", ",'-2,", ",'@SUM(A1),"])
      expect(lines.some((l) => l.includes(cell))).toBe(true);
    // No cell of any line starts with a formula character.
    expect(res.body).not.toMatch(/(^|,)[=+\-@]/m);
    expect(lines.length - 1).toBe(await count('auth.login'));
  });

  it('JSON, the same records as the listing, newest first', async () => {
    const res = await t.request(t.adminToken, {
      method: 'GET',
      url: '/api/audit/export',
      query: { format: 'json', user: 'filter-user' },
    });
    expect(res.statusCode).toBe(200);
    const all = res.json<AuditEntry[]>();
    expect(all).toEqual((await audit({ user: 'filter-user', limit: '1000' })).items);
  });
});

describe('who may read it', () => {
  it('a non-administrator is refused both endpoints (403)', async () => {
    expect((await as(alice, 'GET', '/api/audit')).statusCode).toBe(403);
    expect((await as(alice, 'GET', '/api/audit/export?format=csv')).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/api/audit' })).statusCode).toBe(401);
  });
});

describe('retention', () => {
  it('purges records older than the setting, and none when it is 0', async () => {
    const now = Date.UTC(2030, 5, 1);
    const day = 86_400_000;
    const rec = (time: number) => ({
      time,
      userId: 0,
      username: 'retention-user',
      address: '',
      action: 'file.delete' as const,
      path: '/old',
      destination: '',
      status: 204,
      detail: '',
    });
    t.ctx.audit.record(rec(now - 10 * day));
    t.ctx.audit.record(rec(now - 2 * day));
    await t.ctx.audit.flush();
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), audit: { retentionDays: 0 } });
    await purgeExpiredAudit(t.ctx, now);
    expect((await audit({ user: 'retention-user' })).items).toHaveLength(2);
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), audit: { retentionDays: 5 } });
    await purgeExpiredAudit(t.ctx, now);
    expect((await audit({ user: 'retention-user' })).items.map((e) => e.time)).toEqual([now - 2 * day]);
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), audit: { retentionDays: 90 } });
  });

  it('the setting is in the global settings, 90 days by default, checked', async () => {
    const got = (await as(t.adminToken, 'GET', '/api/settings')).json<{ audit: { retentionDays: number } }>();
    expect(got.audit).toEqual({ retentionDays: 90 });
    expect(
      (await as(t.adminToken, 'PUT', '/api/settings', { audit: { retentionDays: -1 } })).statusCode,
    ).toBe(400);
    expect(t.ctx.store.settings.get().audit.retentionDays).toBe(90);
  });
});
