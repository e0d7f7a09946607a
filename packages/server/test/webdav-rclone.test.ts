import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';
import { haveTool } from './tools.js';

/** Debian's rclone as a real WebDAV client (vendor "other"): copy a tree in, check it, move it, delete it. */

function rclone(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'rclone',
      ['--config', '/dev/null', '--low-level-retries', '1', '--retries', '1', ...args],
      { timeout: 120_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const full = path.join(e.parentPath, e.name);
    out[path.relative(dir, full)] = await fs.readFile(full, 'utf8');
  }
  return out;
}

describe.runIf(haveTool('rclone', 'drives WebDAV as a real sync client'))('rclone over WebDAV', () => {
  let t: TestApp;
  let remote: string;
  let local: string;
  beforeAll(async () => {
    t = await startTestApp();
    await t.createUser({ username: 'sync', scope: '/sync' });
    await fs.mkdir(path.join(t.root, 'sync'), { recursive: true });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const obscured = (await rclone(['obscure', USER_PASSWORD])).out.trim();
    remote = `:webdav,url='http://127.0.0.1:${port}/dav/',vendor=other,user=sync,pass='${obscured}':`;
    local = path.join(t.outside, 'tree');
    await fs.mkdir(path.join(local, 'docs', 'deep'), { recursive: true });
    await fs.writeFile(path.join(local, 'readme.txt'), 'hello\n');
    await fs.writeFile(path.join(local, 'docs', 'a b & c.txt'), 'spaces and an ampersand\n');
    await fs.writeFile(path.join(local, 'docs', 'deep', 'été.md'), '# accents\n');
    await fs.writeFile(path.join(local, 'docs', 'deep', 'big.bin'), Buffer.alloc(3 * 1024 * 1024, 7));
  });
  afterAll(() => t.close());

  it('copies a tree in, checks it, moves it on the server and deletes it', async () => {
    const copy = await rclone(['copy', local, remote + 'backup']);
    expect(copy.code, copy.out).toBe(0);
    const onDisk = path.join(t.root, 'sync', 'backup');
    expect(await tree(onDisk)).toEqual(await tree(local));

    const check = await rclone(['check', local, remote + 'backup']);
    expect(check.code, check.out).toBe(0);
    expect(check.out).toMatch(/0 differences found/);

    const move = await rclone(['moveto', remote + 'backup', remote + 'moved']);
    expect(move.code, move.out).toBe(0);
    await expect(fs.stat(onDisk)).rejects.toThrow();
    expect(await tree(path.join(t.root, 'sync', 'moved'))).toEqual(await tree(local));

    const listed = await rclone(['lsf', '-R', remote + 'moved']);
    expect(listed.code, listed.out).toBe(0);
    expect(listed.out.split('\n').filter(Boolean).sort()).toEqual(
      [
        'docs/',
        'docs/a b & c.txt',
        'docs/deep/',
        'docs/deep/big.bin',
        'docs/deep/été.md',
        'readme.txt',
      ].sort(),
    );

    const purge = await rclone(['purge', remote + 'moved']);
    expect(purge.code, purge.out).toBe(0);
    expect(await fs.readdir(path.join(t.root, 'sync'))).toEqual([]);
  }, 180_000);
});
