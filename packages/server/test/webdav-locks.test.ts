import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { startFilesApp } from './files-helpers.js';
import { useDavApp, t, setT, HOST, dav, file, read, hrefs, PROPPATCH, LOCKINFO } from './webdav-helpers.js';

/**
 * WebDAV locks of another user, XML bombs and oversized bodies, /dav/ under a base URL, and the
 * event hooks WebDAV writes run. Every refusal also checks that nothing changed on disk.
 */
useDavApp();

describe('WebDAV locks between users', () => {
  beforeEach(async () => {
    await t.user('ann', { scope: '/team' });
    await t.user('bob', { scope: '/team' });
    await fs.writeFile(file('team', 'plan.txt'), 'ann writes this');
  });

  async function annLocks(url = '/dav/plan.txt', depth = 'infinity'): Promise<string> {
    const res = await dav('LOCK', url, {
      user: 'ann',
      body: LOCKINFO,
      headers: { depth, timeout: 'Second-600' },
    });
    expect([200, 201]).toContain(res.statusCode);
    expect(res.body).toContain('<D:timeout>Second-600</D:timeout>');
    return String(res.headers['lock-token']).slice(1, -1);
  }

  it("refuses another user's writes with 423, even with the stolen token", async () => {
    const token = await annLocks();
    expect(token).toMatch(/^opaquelocktoken:[0-9a-f-]{36}$/);
    const ifHeader = { if: `(<${token}>)` };
    const put = await dav('PUT', '/dav/plan.txt', { user: 'bob', body: 'bob was here' });
    expect(put.statusCode).toBe(423);
    expect(put.body).toContain('<D:lock-token-submitted><D:href>/dav/plan.txt</D:href>');
    expect(
      (await dav('PUT', '/dav/plan.txt', { user: 'bob', body: 'bob was here', headers: ifHeader }))
        .statusCode,
    ).toBe(423);
    expect((await dav('DELETE', '/dav/plan.txt', { user: 'bob', headers: ifHeader })).statusCode).toBe(423);
    expect(
      (
        await dav('MOVE', '/dav/plan.txt', {
          user: 'bob',
          headers: { ...ifHeader, destination: '/dav/x.txt' },
        })
      ).statusCode,
    ).toBe(423);
    expect(
      (await dav('PROPPATCH', '/dav/plan.txt', { user: 'bob', body: PROPPATCH('a', 'b'), headers: ifHeader }))
        .statusCode,
    ).toBe(423);
    expect((await dav('LOCK', '/dav/plan.txt', { user: 'bob', body: LOCKINFO })).statusCode).toBe(423);
    expect(
      (await dav('UNLOCK', '/dav/plan.txt', { user: 'bob', headers: { 'lock-token': `<${token}>` } }))
        .statusCode,
    ).toBe(403);
    expect(await read('team', 'plan.txt')).toBe('ann writes this');

    expect((await dav('PUT', '/dav/plan.txt', { user: 'ann', body: 'ann again' })).statusCode).toBe(423);
    expect(
      (await dav('PUT', '/dav/plan.txt', { user: 'ann', body: 'ann again', headers: ifHeader })).statusCode,
    ).toBe(204);
    expect(
      (await dav('UNLOCK', '/dav/plan.txt', { user: 'ann', headers: { 'lock-token': `<${token}>` } }))
        .statusCode,
    ).toBe(204);
    expect((await dav('PUT', '/dav/plan.txt', { user: 'bob', body: 'bob now' })).statusCode).toBe(204);
  });

  it('protects members of a folder locked with depth infinity, and creates a file on LOCK of an unmapped URL', async () => {
    await fs.mkdir(file('team', 'dir'));
    const token = await annLocks('/dav/dir/');
    expect((await dav('PUT', '/dav/dir/new.txt', { user: 'bob', body: 'x' })).statusCode).toBe(423);
    expect((await dav('MKCOL', '/dav/dir/sub', { user: 'bob' })).statusCode).toBe(423);
    expect(await fs.readdir(file('team', 'dir'))).toEqual([]);
    expect(
      (await dav('PUT', '/dav/dir/new.txt', { user: 'ann', body: 'x', headers: { if: `(<${token}>)` } }))
        .statusCode,
    ).toBe(201);

    const created = await dav('LOCK', '/dav/fresh.txt', { user: 'bob', body: LOCKINFO });
    expect(created.statusCode).toBe(201);
    expect(await read('team', 'fresh.txt')).toBe('');
  });

  it('lists locks in lockdiscovery, refreshes with If, and drops expired ones', async () => {
    const token = await annLocks();
    const found = await dav('PROPFIND', '/dav/plan.txt', {
      user: 'bob',
      headers: { depth: '0' },
      body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>',
    });
    expect(found.body).toContain(token);
    const refreshed = await dav('LOCK', '/dav/plan.txt', {
      user: 'ann',
      headers: { if: `(<${token}>)`, timeout: 'Second-900' },
    });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.body).toContain('Second-900');
    expect(
      (await dav('LOCK', '/dav/plan.txt', { user: 'bob', headers: { if: `(<${token}>)` } })).statusCode,
    ).toBe(403);
    await t.ctx.store.davLocks.refresh(token, 1, Date.now() - 1);
    expect((await dav('PUT', '/dav/plan.txt', { user: 'bob', body: 'expired lock' })).statusCode).toBe(204);
  });

  it('evaluates tagged If lists against the resource they name, with entity tags and Not', async () => {
    const token = await annLocks();
    await fs.writeFile(file('team', 'other.txt'), 'other');
    const put = (body: string, ifHeader: string) =>
      dav('PUT', '/dav/plan.txt', { user: 'ann', body, headers: { if: ifHeader } });
    expect((await put('a', `</dav/other.txt> (<${token}>)`)).statusCode).toBe(412);
    expect((await put('b', `<http://${HOST}/dav/plan.txt> (Not <DAV:no-lock> <${token}>)`)).statusCode).toBe(
      204,
    );
    const etag = String((await dav('HEAD', '/dav/plan.txt', { user: 'ann' })).headers.etag);
    expect((await put('c', `(<${token}> ["not-${etag.slice(1)}])`)).statusCode).toBe(412);
    expect((await put('d', `(<${token}> [${etag}])`)).statusCode).toBe(204);
    expect((await put('e', `(["x"]) (<${token}>)`)).statusCode).toBe(204);
    expect(await read('team', 'plan.txt')).toBe('e');
  });

  it('answers 412 when the If header does not hold, and 400 for a malformed one', async () => {
    const res = await dav('PUT', '/dav/plan.txt', {
      user: 'ann',
      body: 'x',
      headers: { if: '(["wrong-etag"])' },
    });
    expect(res.statusCode).toBe(412);
    const not = await dav('PUT', '/dav/plan.txt', {
      user: 'ann',
      body: 'y',
      headers: { if: '(<DAV:no-lock>)' },
    });
    expect(not.statusCode).toBe(412);
    expect(
      (await dav('PUT', '/dav/plan.txt', { user: 'ann', body: 'z', headers: { if: '(<unclosed' } }))
        .statusCode,
    ).toBe(400);
    expect(await read('team', 'plan.txt')).toBe('ann writes this');
  });
});

describe('WebDAV request bodies', () => {
  beforeEach(async () => {
    await t.user('ann', { scope: '/ann' });
    await fs.writeFile(file('ann', 'f.txt'), 'f');
  });

  const BOMB = `<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&lol3;</D:displayname></D:prop></D:propfind>`;
  const EXTERNAL = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:p>&xxe;</Z:p></D:prop></D:set></D:propertyupdate>`;

  it('refuses XML bombs, external entities and malformed XML with 400 in PROPFIND, PROPPATCH and LOCK', async () => {
    for (const method of ['PROPFIND', 'PROPPATCH', 'LOCK']) {
      for (const body of [BOMB, EXTERNAL, '<D:propfind xmlns:D="DAV:"><unclosed>']) {
        const res = await dav(method, '/dav/f.txt', { user: 'ann', headers: { depth: '0' }, body });
        expect(res.statusCode, `${method} ${body.slice(0, 40)}`).toBe(400);
        expect(res.body).not.toContain('root:');
      }
    }
    expect((await t.ctx.store.davProps.listWithin('default', '/ann/f.txt', false)).size).toBe(0);
    expect(await t.ctx.store.davLocks.related('default', '/ann/f.txt')).toEqual([]);
  });

  it('refuses bodies over 1 MiB with 413 in PROPFIND, PROPPATCH and LOCK', async () => {
    const huge = `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:p>${'x'.repeat(2 * 1024 * 1024)}</Z:p></D:prop></D:set></D:propertyupdate>`;
    for (const method of ['PROPFIND', 'PROPPATCH', 'LOCK']) {
      const res = await dav(method, '/dav/f.txt', { user: 'ann', headers: { depth: '0' }, body: huge });
      expect(res.statusCode, method).toBe(413);
    }
    expect((await t.ctx.store.davProps.listWithin('default', '/ann/f.txt', false)).size).toBe(0);
  });
});

describe('WebDAV under a base URL', () => {
  it('answers at {baseURL}/dav/ with hrefs and Destinations under it', async () => {
    await t.close();
    setT(await startFilesApp({ baseURL: '/fb' }));
    await t.user('ann', { scope: '/ann' });
    await fs.writeFile(file('ann', 'a.txt'), 'a');
    const list = await dav('PROPFIND', '/fb/dav/', { user: 'ann', headers: { depth: '1' } });
    expect(list.statusCode).toBe(207);
    expect(hrefs(list.body)).toEqual(['/fb/dav/', '/fb/dav/a.txt']);
    const copy = await dav('COPY', '/fb/dav/a.txt', {
      user: 'ann',
      headers: { destination: `http://${HOST}/fb/dav/b.txt` },
    });
    expect(copy.statusCode).toBe(201);
    expect(await read('ann', 'b.txt')).toBe('a');
    const outside = await dav('COPY', '/fb/dav/a.txt', {
      user: 'ann',
      headers: { destination: `http://${HOST}/dav/c.txt` },
    });
    expect(outside.statusCode).toBe(502);
  });
});

describe('WebDAV and event hooks', () => {
  it('runs the same before and after hooks as the web API, and a refusing hook changes nothing, not even an overwritten destination', async () => {
    await t.close();
    const bin = path.join(os.tmpdir(), `fb-dav-hooks-${process.pid}-${Date.now()}`);
    await fs.mkdir(bin);
    const logFile = path.join(bin, 'log.txt');
    await fs.writeFile(
      path.join(bin, 'log'),
      `#!/bin/sh\nprintf "%s %s\\n" "$TRIGGER" "$*" >> '${logFile}'\n`,
      { mode: 0o755 },
    );
    await fs.writeFile(path.join(bin, 'refuse'), '#!/bin/sh\necho "not today" >&2; exit 3\n', {
      mode: 0o755,
    });
    try {
      setT(await startFilesApp({ disableExec: false, execPath: `${bin}:/usr/bin:/bin` }));
      await t.user('bob', { scope: '/bob' });
      const home = await fs.realpath(file('bob'));
      const s = t.ctx.store.settings.get();
      const commands = Object.fromEntries(Object.keys(s.commands).map((k) => [k, [] as string[]]));
      await t.ctx.store.settings.save({
        ...s,
        commands: {
          ...commands,
          before_upload: ['log $FILE'],
          after_save: ['log $FILE'],
          after_rename: ['log $FILE $DESTINATION'],
          before_delete: ['refuse'],
          before_copy: ['refuse'],
        },
      });
      expect((await dav('PUT', '/dav/a.txt', { user: 'bob', body: 'a' })).statusCode).toBe(201);
      expect((await dav('PUT', '/dav/a.txt', { user: 'bob', body: 'b' })).statusCode).toBe(204);
      expect(
        (await dav('MOVE', '/dav/a.txt', { user: 'bob', headers: { destination: '/dav/b.txt' } })).statusCode,
      ).toBe(201);
      const del = await dav('DELETE', '/dav/b.txt', { user: 'bob' });
      expect(del.statusCode).toBe(403);
      expect(del.body).toContain('the before_delete hook refused the operation');
      expect(await read('bob', 'b.txt')).toBe('b');
      // An overwriting COPY removes the destination only once the before-hook let it go ahead.
      await fs.writeFile(file('bob', 'c.txt'), 'keep me');
      const copy = await dav('COPY', '/dav/b.txt', { user: 'bob', headers: { destination: '/dav/c.txt' } });
      expect(copy.statusCode).toBe(403);
      expect(await read('bob', 'c.txt')).toBe('keep me');
      expect((await fs.readFile(logFile, 'utf8')).trimEnd().split('\n')).toEqual([
        `before_upload ${path.join(home, 'a.txt')}`,
        `after_save ${path.join(home, 'a.txt')}`,
        `after_rename ${path.join(home, 'a.txt')} ${path.join(home, 'b.txt')}`,
      ]);
    } finally {
      await fs.rm(bin, { recursive: true, force: true });
    }
  });
});
