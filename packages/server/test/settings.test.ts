import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await t.close();
});

describe('/api/settings', () => {
  it('answers the exact File Browser shape, without secrets', async () => {
    const res = await t.request(t.adminToken, { method: 'GET', url: '/api/settings' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual([
      'signup',
      'hideLoginButton',
      'createUserDir',
      'minimumPasswordLength',
      'userHomeBasePath',
      'defaults',
      'authMethod',
      'rules',
      'branding',
      'tus',
      'shell',
      'commands',
      'unsafeCommands',
      'trash',
      'audit',
      'webdav',
      'webdavPasswords',
    ]);
    expect(body.unsafeCommands).toEqual([]);
    expect(body.webdav).toBe('on');
    expect(body.trash).toEqual({ enabled: true, retentionDays: 30 });
    expect(body.audit).toEqual({ retentionDays: 90 });
    expect(body.webdavPasswords).toBe(true);
    expect(body.tus).toEqual({ chunkSize: 10485760, retryCount: 5 });
    expect(body.minimumPasswordLength).toBe(12);
    expect(Object.keys(body.commands)).toHaveLength(10);
    expect(res.body).not.toContain(t.ctx.store.settings.get().key);
  });

  it('is for admins only', async () => {
    await t.createUser({ username: 'bob' });
    const token = await t.login('bob');
    expect((await t.request(token, { method: 'GET', url: '/api/settings' })).statusCode).toBe(403);
    expect(
      (await t.request(token, { method: 'PUT', url: '/api/settings', payload: { signup: true } })).statusCode,
    ).toBe(403);
    expect(t.ctx.store.settings.get().signup).toBe(false);
  });

  it('saves a full body and keeps the authMethod', async () => {
    const current = (await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).json();
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: '/api/settings',
      payload: {
        ...current,
        signup: true,
        authMethod: 'noauth',
        branding: { ...current.branding, name: 'Family files', theme: 'dark' },
        tus: { chunkSize: 5 * 1024 * 1024, retryCount: 0 },
        rules: [{ regex: false, allow: false, path: '/private', regexp: null }],
        commands: { after_upload: ['echo done'] },
      },
    });
    expect(res.statusCode).toBe(200);
    const saved = t.ctx.store.settings.get();
    expect(saved.signup).toBe(true);
    expect(saved.authMethod).toBe('json');
    expect(saved.branding).toMatchObject({ name: 'Family files', theme: 'dark' });
    expect(saved.tus).toEqual({ chunkSize: 5242880, retryCount: 0 });
    expect(saved.commands.after_upload).toEqual(['echo done']);
    expect(saved.commands.before_save).toEqual([]);
  });

  it("accepts File Browser's leading (?i) flag in regex rules", async () => {
    const current = (await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).json();
    const rules = [{ regex: true, allow: false, path: '', regexp: { raw: '(?i)\\.(jpe?g|png)$' } }];
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: '/api/settings',
      payload: { ...current, rules },
    });
    expect(res.statusCode).toBe(200);
    expect(t.ctx.store.settings.get().rules).toEqual(rules);
    // ...and applies it: an upper-case extension is denied like a lower-case one.
    await fs.writeFile(path.join(t.root, 'PHOTO.JPG'), 'x');
    await fs.writeFile(path.join(t.root, 'notes.txt'), 'x');
    const listing = await t.request(t.adminToken, { method: 'GET', url: '/api/resources/' });
    expect(listing.json().items.map((i: { name: string }) => i.name)).toEqual(['notes.txt']);
  });

  it('accepts each theme: system default (empty), light and dark', async () => {
    const current = (await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).json();
    for (const theme of ['light', 'dark', '']) {
      const res = await t.request(t.adminToken, {
        method: 'PUT',
        url: '/api/settings',
        payload: { ...current, branding: { ...current.branding, theme } },
      });
      expect(res.statusCode, theme).toBe(200);
      expect(t.ctx.store.settings.get().branding.theme).toBe(theme);
    }
  });

  it('validates every field and saves nothing on error', async () => {
    const current = (await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).json();
    const cases: [object, string][] = [
      [{ branding: { ...current.branding, theme: 'pink' } }, 'theme must be one of'],
      [{ tus: { chunkSize: 0, retryCount: 1 } }, 'chunk size must be greater than 0'],
      [{ tus: { chunkSize: 10, retryCount: -1 } }, 'retryCount'],
      [{ defaults: { ...current.defaults, uploadsLimit: 0 } }, 'uploadsLimit'],
      [{ defaults: { ...current.defaults, uploadsLimit: 11 } }, 'uploadsLimit'],
      [{ tus: { chunkSize: -5, retryCount: 1 } }, 'chunkSize'],
      [{ branding: { ...current.branding, theme: 'Dark' } }, 'theme must be one of'],
      [
        {
          rules: [
            { regex: false, allow: false, path: '/a', regexp: null },
            { regex: true, allow: true, path: '', regexp: { raw: '(?<name' } },
          ],
        },
        'global rule 2 has an invalid regular expression: (?<name',
      ],
      [
        { rules: [{ regex: true, allow: true, path: '', regexp: { raw: '[a-' } }] },
        'global rule 1 has an invalid regular expression',
      ],
      [{ rules: [{ regex: true, allow: true, path: '', regexp: null }] }, 'without a pattern'],
      [{ signup: 'yes please' }, 'signup'],
      [{ userHomeBasePath: '/../x' }, 'inside the root'],
      [
        { unsafeCommands: ['/bin/sh'] },
        'unsafeCommands entry "/bin/sh" must be a bare command name, not a path',
      ],
      [{ unsafeCommands: ['find -exec'] }, 'unsafeCommands entry "find -exec" must be one command name'],
      [{ unsafeCommands: [''] }, 'an entry of unsafeCommands is empty'],
      [{ unsafeCommands: [3] }, 'unsafeCommands'],
      [{ minimumPasswordLength: 73 }, 'minimumPasswordLength'],
      [{ minimumPasswordLength: -1 }, 'minimumPasswordLength'],
      [{ branding: { ...current.branding, color: 'red;}body{x:y' } }, 'branding color must be'],
      [{ branding: { ...current.branding, color: '#12345' } }, 'branding color must be'],
      [{ trash: { retentionDays: -1 } }, 'retentionDays'],
      [{ trash: { enabled: 'yes' } }, 'enabled'],
    ];
    for (const [patch, message] of cases) {
      const res = await t.request(t.adminToken, {
        method: 'PUT',
        url: '/api/settings',
        payload: { ...current, ...patch },
      });
      expect(res.statusCode, message).toBe(400);
      expect(res.body).toContain(message);
    }
    expect((await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).json()).toEqual(current);
    const bad = await t.request(t.adminToken, {
      method: 'PUT',
      url: '/api/settings',
      headers: { 'content-type': 'application/json' },
      payload: '{oops',
    });
    expect(bad.statusCode).toBe(400);
  });

  it('saves unsafeCommands trimmed and deduplicated, keeps them when left out, and clears them with null', async () => {
    const put = (payload: object) =>
      t.request(t.adminToken, { method: 'PUT', url: '/api/settings', payload });
    expect((await put({ unsafeCommands: ['find', ' env ', 'find'] })).statusCode).toBe(200);
    expect(t.ctx.store.settings.get().unsafeCommands).toEqual(['find', 'env']);
    const got = (await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).json();
    expect(got.unsafeCommands).toEqual(['find', 'env']);

    expect((await put({ signup: true })).statusCode).toBe(200);
    expect(t.ctx.store.settings.get().unsafeCommands).toEqual(['find', 'env']);

    expect((await put({ unsafeCommands: null })).statusCode).toBe(200);
    expect(t.ctx.store.settings.get().unsafeCommands).toEqual([]);
  });

  it('saves the fields every settings screen shows: minimum password length, login button, colour', async () => {
    const put = (payload: object) =>
      t.request(t.adminToken, { method: 'PUT', url: '/api/settings', payload });
    const branding = t.ctx.store.settings.get().branding;
    for (const color of ['#0a7', '#00aa77', '#00aa77cc', 'teal', '']) {
      const res = await put({
        minimumPasswordLength: 20,
        hideLoginButton: true,
        branding: { ...branding, color },
      });
      expect(res.statusCode, color).toBe(200);
      expect(t.ctx.store.settings.get().branding.color).toBe(color);
    }
    expect(t.ctx.store.settings.get()).toMatchObject({ minimumPasswordLength: 20, hideLoginButton: true });
  });

  it('keeps a colour imported from an old database that this form would refuse, until it is changed', async () => {
    const stored = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({ ...stored, branding: { ...stored.branding, color: 'rgb(0, 0, 0)' } });
    const current = (await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).json();
    const res = await t.request(t.adminToken, {
      method: 'PUT',
      url: '/api/settings',
      payload: { ...current, signup: true },
    });
    expect(res.statusCode).toBe(200);
    expect(t.ctx.store.settings.get()).toMatchObject({ signup: true, branding: { color: 'rgb(0, 0, 0)' } });
  });

  it('saves the trash settings, each key kept when left out', async () => {
    const put = (payload: object) =>
      t.request(t.adminToken, { method: 'PUT', url: '/api/settings', payload });
    expect((await put({ trash: { retentionDays: 7 } })).statusCode).toBe(200);
    expect(t.ctx.store.settings.get().trash).toEqual({ enabled: true, retentionDays: 7 });
    expect((await put({ trash: { enabled: false } })).statusCode).toBe(200);
    const got = (await t.request(t.adminToken, { method: 'GET', url: '/api/settings' })).json();
    expect(got.trash).toEqual({ enabled: false, retentionDays: 7 });
  });
});
