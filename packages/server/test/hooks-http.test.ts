import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StoredSettings } from '../src/store/settings.js';
import { ALL } from './files-helpers.js';
import { startTestApp, type TestApp } from './helpers.js';

/** Hook programs of these tests: `log` appends its trigger and arguments to a file outside the scope. */
function helpers(logFile: string): Record<string, string> {
  return {
    log: `printf "%s %s\\n" "$TRIGGER" "$*" >> '${logFile}'`,
    refuse: 'echo "not today" >&2; exit 3',
  };
}

describe('event hooks around the file endpoints', () => {
  let t: TestApp;
  let bin: string;
  let logFile: string;
  let token: string;
  let home: string;

  const setHooks = async (commands: Record<string, string[]>, shell: string[] = []) => {
    const s = t.ctx.store.settings.get();
    const cleared = Object.fromEntries(Object.keys(s.commands).map((k) => [k, [] as string[]]));
    await t.ctx.store.settings.save({ ...s, shell, commands: { ...cleared, ...commands } } as StoredSettings);
  };
  const log = async () => (await fs.readFile(logFile, 'utf8').catch(() => '')).trimEnd().split('\n');
  const req = (method: 'POST' | 'PUT' | 'DELETE' | 'PATCH', url: string, payload?: string) =>
    t.request(token, { method, url, payload, headers: { 'content-type': 'text/plain' } });

  beforeAll(async () => {
    bin = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-hooks-http-'));
    logFile = path.join(bin, 'log.txt');
    for (const [name, body] of Object.entries(helpers(logFile))) {
      await fs.writeFile(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    }
    t = await startTestApp({ disableExec: false, execPath: `${bin}:/usr/bin:/bin` });
    await t.createUser({
      username: 'bob',
      scope: '/bob',
      perm: ALL,
    });
    await fs.mkdir(path.join(t.root, 'bob'), { recursive: true });
    home = await fs.realpath(path.join(t.root, 'bob'));
    token = await t.login('bob');
  });

  afterAll(async () => {
    await t.close();
    await fs.rm(bin, { recursive: true, force: true });
  });

  beforeEach(async () => {
    t.ctx.config.disableExec = false;
    await setHooks({});
    await fs.rm(logFile, { force: true });
    await fs.rm(home, { recursive: true, force: true });
    await fs.mkdir(home);
    await fs.writeFile(path.join(home, 'a.txt'), 'old');
  });

  it('runs before and after hooks of a save with the real path as one argument', async () => {
    await setHooks({ before_save: ['log $FILE'], after_save: ['log $FILE'] });
    const res = await req('PUT', '/api/resources/a.txt', 'new');
    expect(res.statusCode).toBe(200);
    const file = path.join(home, 'a.txt');
    expect(await log()).toEqual([`before_save ${file}`, `after_save ${file}`]);
    expect(await fs.readFile(file, 'utf8')).toBe('new');
  });

  it('a refusing before-hook answers 403 with its reason and changes nothing', async () => {
    await setHooks({ before_save: ['refuse'], before_delete: ['refuse'], before_upload: ['refuse'] });
    const save = await req('PUT', '/api/resources/a.txt', 'new');
    expect(save.statusCode).toBe(403);
    expect(save.body).toContain('the before_save hook refused the operation (exit status 3)');
    expect(await fs.readFile(path.join(home, 'a.txt'), 'utf8')).toBe('old');

    const del = await req('DELETE', '/api/resources/a.txt');
    expect(del.statusCode).toBe(403);
    await expect(fs.stat(path.join(home, 'a.txt'))).resolves.toBeTruthy();

    const create = await req('POST', '/api/resources/b.txt', 'b');
    expect(create.statusCode).toBe(403);
    const folder = await req('POST', '/api/resources/new-folder/');
    expect(folder.statusCode).toBe(403);
    expect((await fs.readdir(home)).sort()).toEqual(['a.txt']);
  });

  it('a failing after-hook leaves the operation reported as done, with a warning header', async () => {
    await setHooks({ after_delete: ['refuse'] });
    const res = await req('DELETE', '/api/resources/a.txt');
    expect(res.statusCode).toBe(204);
    expect(decodeURIComponent(String(res.headers['x-hook-warning']))).toBe(
      'the after_delete hook failed (exit status 3)',
    );
    await expect(fs.stat(path.join(home, 'a.txt'))).rejects.toThrow();
  });

  it('gives copy and rename hooks the source and the destination', async () => {
    await setHooks({ before_copy: ['log $FILE $DESTINATION'], after_rename: ['log $FILE $DESTINATION'] });
    expect((await req('PATCH', '/api/resources/a.txt?action=copy&destination=%2Fc.txt')).statusCode).toBe(
      200,
    );
    expect((await req('PATCH', '/api/resources/c.txt?action=rename&destination=%2Fd.txt')).statusCode).toBe(
      200,
    );
    expect(await log()).toEqual([
      `before_copy ${path.join(home, 'a.txt')} ${path.join(home, 'c.txt')}`,
      `after_rename ${path.join(home, 'c.txt')} ${path.join(home, 'd.txt')}`,
    ]);
  });

  it('runs no hook for a request refused before the operation', async () => {
    await setHooks({ before_copy: ['log $FILE'], before_rename: ['log $FILE'] });
    const bad = await req('PATCH', '/api/resources/a.txt?action=explode&destination=%2Fc.txt');
    expect(bad.statusCode).toBe(400);
    expect(await log()).toEqual(['']);
  });

  it('runs upload hooks around a resumable upload: before at creation, after at completion', async () => {
    await setHooks({ before_upload: ['log $FILE'], after_upload: ['log $FILE'] });
    const target = path.join(home, 'big.bin');
    const create = await t.request(token, {
      method: 'POST',
      url: '/api/tus/big.bin',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '4' },
    });
    expect(create.statusCode).toBe(201);
    expect(await log()).toEqual([`before_upload ${target}`]);
    const patch = await t.request(token, {
      method: 'PATCH',
      url: '/api/tus/big.bin',
      payload: Buffer.from('data'),
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
    });
    expect(patch.statusCode).toBe(204);
    expect(await log()).toEqual([`before_upload ${target}`, `after_upload ${target}`]);
    expect(await fs.readFile(target, 'utf8')).toBe('data');
  });

  it('a refusing before_upload hook stops a resumable upload before anything is written', async () => {
    await setHooks({ before_upload: ['refuse'] });
    const create = await t.request(token, {
      method: 'POST',
      url: '/api/tus/nope.bin',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '4' },
    });
    expect(create.statusCode).toBe(403);
    expect((await fs.readdir(home)).sort()).toEqual(['a.txt']);
    expect(await t.ctx.store.uploads.stale(Date.now() + 1)).toEqual([]);
  });

  it('runs nothing while exec is disabled', async () => {
    t.ctx.config.disableExec = true;
    await setHooks({ before_save: ['refuse'] });
    expect((await req('PUT', '/api/resources/a.txt', 'new')).statusCode).toBe(200);
  });

  describe('a file named $(touch /tmp/pwned) creates nothing', () => {
    let marker: string;
    let names: string[];
    beforeEach(() => {
      const id = crypto.randomUUID();
      marker = path.join(os.tmpdir(), `pwned-${id}`);
      // Relative forms land in the hooks' working folder (the scope); absolute ones in /tmp.
      names = [
        `$(touch pwned-${id})`,
        `\`touch pwned-${id}\``,
        `a;touch pwned-${id}`,
        `b&&touch pwned-${id}`,
        `c|touch pwned-${id}`,
      ];
    });
    const created = async () => {
      const local = (await fs.readdir(home)).filter((n) => n.startsWith('pwned-'));
      const tmp = await fs.stat(marker).then(
        () => true,
        () => false,
      );
      return { local, tmp };
    };
    const hostileUploads = async () => {
      for (const name of names) {
        const res = await req('POST', `/api/resources/${encodeURIComponent(name)}`, 'x');
        expect(res.statusCode, name).toBe(200);
      }
      // "/" cannot be part of a name: the absolute form spans folders, as in an upload of a folder.
      const nested = `/$(touch ${marker})`.split('/').map(encodeURIComponent).join('/');
      const res = await req('POST', `/api/resources/${encodeURIComponent('$(touch ')}${nested}`, 'x');
      expect(res.statusCode).toBe(200);
      const moved = await req(
        'PATCH',
        `/api/resources/a.txt?action=rename&destination=${encodeURIComponent(`/$(touch pwned-x)`)}`,
      );
      expect(moved.statusCode).toBe(200);
    };

    it('without a shell: each name is one argument of the hook', async () => {
      await setHooks({
        before_upload: ['log $FILE'],
        after_upload: ['log "${FILE}"'],
        after_rename: ['log $FILE $DESTINATION'],
      });
      await hostileUploads();
      expect(await created()).toEqual({ local: [], tmp: false });
      const lines = await log();
      for (const name of names) {
        expect(lines).toContain(`before_upload ${path.join(home, name)}`);
        expect(lines).toContain(`after_upload ${path.join(home, name)}`);
      }
      expect(lines).toContain(
        `after_rename ${path.join(home, 'a.txt')} ${path.join(home, '$(touch pwned-x)')}`,
      );
      expect(await fs.readFile(path.join(home, '$(touch pwned-x)'), 'utf8')).toBe('old');
    });

    it('with settings.shell: the names reach the shell as data in its environment', async () => {
      await setHooks(
        {
          before_upload: ['log $FILE'],
          after_upload: ['log "$FILE"; echo "$FILE" > /dev/null'],
          after_rename: ['log "$FILE" "$DESTINATION"'],
        },
        ['sh', '-c'],
      );
      await hostileUploads();
      expect(await created()).toEqual({ local: [], tmp: false });
      const lines = await log();
      for (const name of names) expect(lines).toContain(`after_upload ${path.join(home, name)}`);
    });
  });
});
