import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.js';

let t: TestApp | undefined;
let captchaServer: http.Server | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await new Promise((r) => (captchaServer ? captchaServer.close(r) : r(undefined)));
  captchaServer = undefined;
});

async function useMethod(
  app: TestApp,
  method: string,
  auther: Partial<ReturnType<TestApp['ctx']['store']['settings']['get']>['auther']> = {},
) {
  const s = app.ctx.store.settings.get();
  await app.ctx.store.settings.save({ ...s, authMethod: method, auther: { ...s.auther, ...auther } });
}

/** A stand-in for the reCAPTCHA verification service on loopback: accepts the response "good". */
async function startCaptcha(): Promise<string> {
  captchaServer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      const ok =
        req.url === '/recaptcha/api/siteverify' &&
        form.get('secret') === 'sekrit' &&
        form.get('response') === 'good';
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ success: ok }));
    });
  });
  await new Promise<void>((r) => captchaServer!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(captchaServer!.address() as AddressInfo).port}`;
}

describe('proxy auth', () => {
  it('signs in the user named by the header, creating them without admin or execute', async () => {
    t = await startTestApp();
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({
      ...s,
      createUserDir: true,
      defaults: { ...s.defaults, perm: { ...s.defaults.perm, admin: true, execute: true } },
    });
    await useMethod(t, 'proxy', { header: 'X-Remote-User' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      headers: { 'x-remote-user': 'dana' },
    });
    expect(res.statusCode).toBe(200);
    const dana = (await t.ctx.store.users.getByUsername('dana'))!;
    expect(dana.perm.admin).toBe(false);
    expect(dana.perm.execute).toBe(false);
    expect(dana.lockPassword).toBe(true);
    expect(dana.scope).toBe('/users/dana');
    expect((decodeJwt(res.body).user as { username: string }).username).toBe('dana');
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      headers: { 'x-remote-user': 'admin' },
    });
    expect((decodeJwt(again.body).user as { id: number }).id).toBe(1);
  });

  it('ignores the header from addresses that are not trusted proxies, and a missing header', async () => {
    t = await startTestApp();
    await useMethod(t, 'proxy', { header: 'X-Remote-User' });
    const foreign = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      remoteAddress: '203.0.113.9',
      headers: { 'x-remote-user': 'admin' },
    });
    expect(foreign.statusCode).toBe(403);
    const missing = await t.app.inject({ method: 'POST', url: '/api/login' });
    expect(missing.statusCode).toBe(403);
    expect(await t.ctx.store.users.list()).toHaveLength(1);
  });

  it('believes the header from a trusted proxy that forwards the browser address, and only from it', async () => {
    t = await startTestApp();
    await useMethod(t, 'proxy', { header: 'X-Remote-User' });
    // nginx in front on loopback, passing the browser's address on.
    const behindProxy = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      remoteAddress: '127.0.0.1',
      headers: { 'x-remote-user': 'admin', 'x-forwarded-for': '198.51.100.7' },
    });
    expect(behindProxy.statusCode).toBe(200);
    expect((decodeJwt(behindProxy.body).user as { id: number }).id).toBe(1);
    // A client elsewhere claiming to come from loopback is still not the proxy.
    const spoofed = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      remoteAddress: '203.0.113.9',
      headers: { 'x-remote-user': 'admin', 'x-forwarded-for': '127.0.0.1' },
    });
    expect(spoofed.statusCode).toBe(403);
    expect(spoofed.body).toBe('403 Forbidden\n');
  });

  it('gives auto-created users their home folder on disk', async () => {
    t = await startTestApp();
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...s, createUserDir: true, userHomeBasePath: '/homes' });
    await useMethod(t, 'proxy', { header: 'X-Remote-User' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      headers: { 'x-remote-user': 'Ezra Pound' },
    });
    expect(res.statusCode).toBe(200);
    expect((await t.ctx.store.users.getByUsername('ezra pound'))!.scope).toBe('/homes/Ezra-Pound');
    expect(fs.statSync(path.join(t.root, 'homes', 'Ezra-Pound')).isDirectory()).toBe(true);
  });

  it('refuses to create a user whose home folder already holds files, with 409, creating nothing', async () => {
    t = await startTestApp();
    await t.ctx.store.settings.save({ ...t.ctx.store.settings.get(), createUserDir: true });
    await useMethod(t, 'proxy', { header: 'X-Remote-User' });
    const left = path.join(t.root, 'users', 'ezra');
    fs.mkdirSync(left, { recursive: true });
    fs.writeFileSync(path.join(left, 'tax.txt'), 'a deleted account’s');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      headers: { 'x-remote-user': 'ezra' },
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toBe(
      '409 Conflict (the home folder for this username already exists and holds files: an administrator can remove or rename it)\n',
    );
    expect(await t.ctx.store.users.getByUsername('ezra')).toBeUndefined();
    expect(fs.readdirSync(left)).toEqual(['tax.txt']);
  });

  it('trusts configured proxy ranges', async () => {
    t = await startTestApp({ trustedProxies: ['10.1.0.0/16'] });
    await useMethod(t, 'proxy', { header: 'X-Remote-User' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/login',
      remoteAddress: '10.1.2.3',
      headers: { 'x-remote-user': 'admin' },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('noauth', () => {
  it('signs everyone in as the first user', async () => {
    t = await startTestApp();
    await useMethod(t, 'noauth');
    const res = await t.app.inject({ method: 'POST', url: '/api/login', payload: {} });
    expect(res.statusCode).toBe(200);
    expect((decodeJwt(res.body).user as { id: number }).id).toBe(1);
  });
});

describe('reCAPTCHA', () => {
  it('is demanded on login and on signup when configured', async () => {
    const host = await startCaptcha();
    t = await startTestApp();
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({
      ...s,
      signup: true,
      auther: { ...s.auther, recaptcha: { host, key: 'site', secret: 'sekrit' } },
    });
    const login = (recaptcha?: string) =>
      t!.app.inject({
        method: 'POST',
        url: '/api/login',
        payload: { username: 'admin', password: 'admin-password-for-tests', ...(recaptcha && { recaptcha }) },
      });
    expect((await login()).statusCode).toBe(403);
    expect((await login('bad')).statusCode).toBe(403);
    expect((await login('good')).statusCode).toBe(200);
    const signup = (recaptcha?: string) =>
      t!.app.inject({
        method: 'POST',
        url: '/api/signup',
        payload: { username: 'newbie', password: 'a-long-new-password', ...(recaptcha && { recaptcha }) },
      });
    expect((await signup('bad')).statusCode).toBe(403);
    expect(await t.ctx.store.users.getByUsername('newbie')).toBeUndefined();
    expect((await signup('good')).statusCode).toBe(200);
  });
});
