import { decodeJwt } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signToken } from '../src/auth/tokens.js';
import { startTestApp, type TestApp } from './helpers.js';

/*
 * Class: session tokens that outlive what they were issued for. File Browser sent the token in
 * the URL (`?auth=`, GHSA-rmwh-g367-mj4x), where logs and Referer headers keep it, and with proxy
 * authentication let a token pass after its expiry (GHSA-v3jv-rmh2-635j). Here a token travels
 * only in X-Auth or the auth cookie, and needs both its session and an unexpired `exp`.
 */

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

/** The admin's token re-signed with the same key and session, `seconds` from now. */
async function adminTokenExpiring(seconds: number): Promise<string> {
  const { sid } = decodeJwt(t.adminToken) as { sid: string };
  const admin = t.ctx.store.users.getByUsername('admin')!;
  return signToken(admin, sid, t.ctx.store.settings.get().key, seconds);
}

describe('session tokens', () => {
  it('are never read from the URL', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/users/1?auth=${t.adminToken}` });
    expect(res.statusCode).toBe(401);
    expect(res.body).toBe('401 Unauthorized\n');
  });

  it('are refused once expired, though their session is alive, with every auth method', async () => {
    const live = await adminTokenExpiring(60);
    const expired = await adminTokenExpiring(-1);
    for (const method of ['json', 'proxy']) {
      const s = t.ctx.store.settings.get();
      t.ctx.store.settings.save({
        ...s,
        authMethod: method,
        auther: { ...s.auther, header: 'X-Remote-User' },
      });
      const ok = await t.app.inject({ method: 'GET', url: '/api/users/1', headers: { 'x-auth': live } });
      expect(ok.statusCode, method).toBe(200);
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/users/1',
        headers: { 'x-auth': expired, 'x-remote-user': 'admin' },
      });
      expect(res.statusCode, method).toBe(401);
      expect(
        (await t.app.inject({ method: 'POST', url: '/api/renew', headers: { 'x-auth': expired } }))
          .statusCode,
      ).toBe(401);
    }
  });
});
