import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../src/auth/accounts.js';
import { quotaLedgerOf } from '../src/files/change/quota.js';
import type { StoredUser } from '../src/store/users.js';
import {
  PASSWORD,
  PERM,
  type Server,
  startServer,
  stopServer,
  run,
  login,
  filesBelow,
} from './security-runner-helpers.js';

/**
 * Commands and quotas, with and without the sandbox: a command gets the room the scope's quota
 * leaves, one command at a time, and what it wrote is counted before the next one runs.
 */

describe.each(['bwrap', 'off'] as const)('commands and quotas (sandbox: %s)', (sandbox) => {
  const QUOTA = 1_000_000;
  let s: Server;
  let carol: StoredUser;
  let token: string;
  let home: string;

  const upload = (name: string, bytes: number) =>
    s.app.inject({
      method: 'POST',
      url: `/api/resources/${name}?override=true`,
      headers: { 'x-auth': token },
      payload: Buffer.alloc(bytes, 'q'),
    });
  /** What the server counts in carol's scope, walked again first. */
  const usage = async () => {
    const res = await s.app.inject({
      method: 'GET',
      url: '/api/usage/?recount=true',
      headers: { 'x-auth': token },
    });
    expect(res.statusCode).toBe(200);
    return res.json<{ used: number; quota: number }>();
  };
  const onDisk = async () => {
    let total = 0;
    for (const f of await filesBelow(home)) total += f.bytes.length;
    return total;
  };

  beforeAll(async () => {
    s = await startServer(sandbox);
    carol = await createAccount(
      s.ctx,
      {
        username: 'carol',
        scope: '/users/carol',
        perm: PERM,
        commands: ['cp', 'dd', 'ls', 'split', 'cat', 'rm', 'install', 'mkdir', 'fallocate'],
        quota: QUOTA,
      },
      PASSWORD,
      'cli',
    );
    token = await login(s, 'carol');
    home = path.join(s.root, 'users/carol');
  });

  beforeEach(async () => {
    await s.ctx.store.users.update({ ...(await s.ctx.store.users.get(carol.id))!, quota: QUOTA });
    for (const name of await fs.readdir(home)) await fs.rm(path.join(home, name), { recursive: true });
    expect(await usage()).toMatchObject({ used: 0 });
    expect((await upload('big.bin', 600_000)).statusCode).toBe(200);
    expect(await usage()).toMatchObject({ used: 600_000, quota: QUOTA });
  });

  afterAll(() => stopServer(s));

  it('counts the room it lent a command as written while the walks after it cannot see the whole scope (a red-team finding)', async () => {
    // A folder the server cannot list, or one too deep to walk, hid what commands wrote into it:
    // here every walk after the command sees the scope change under it.
    expect((await upload('spin.bin', 1)).statusCode).toBe(200);
    let n = 0;
    quotaLedgerOf(s.ctx).walkStep = async (real) => {
      if (!/^(spin\.bin|moving-\d+)$/.test(path.basename(real))) return;
      await fs.rename(real, path.join(path.dirname(real), `moving-${++n}`)).catch(() => undefined);
    };
    try {
      const dd = await run(s, token, 'dd if=big.bin of=part.bin bs=1000 count=100');
      expect(dd, dd.lines.join('\n')).toMatchObject({ code: 1000 });
    } finally {
      quotaLedgerOf(s.ctx).walkStep = undefined;
    }
    const counted = await s.app.inject({ method: 'GET', url: '/api/usage/', headers: { 'x-auth': token } });
    expect(counted.json<{ used: number }>().used).toBeGreaterThanOrEqual(QUOTA);
    expect((await upload('more.bin', 1)).statusCode).toBe(507);
    // A walk that sees it all counts what is there.
    expect(await usage()).toMatchObject({ used: 700_001 });
  });

  it('cuts a file written past the room the quota leaves, and says so', async () => {
    const dd = await run(s, token, 'dd if=big.bin of=copy.bin bs=65536');
    expect(dd.code).toBe(1011);
    expect(dd.reason).toBe('file size limit of 400000 bytes reached');
    expect(dd.lines.at(-1)).toBe(
      'Command stopped: a file it wrote reached 400 kB, the room left by your quota or on the disk.',
    );
    expect((await fs.stat(path.join(home, 'copy.bin'))).size).toBe(400_000);
    expect(await usage()).toMatchObject({ used: QUOTA });
    expect(await onDisk()).toBe(QUOTA);
  });

  it('refuses a cp that would pass the quota before it starts, a file or a tree', async () => {
    await fs.mkdir(path.join(home, 'tree'));
    for (let i = 0; i < 50; i++)
      await fs.writeFile(path.join(home, 'tree', `f${i}`), Buffer.alloc(8_000, 'x'));
    await usage();
    for (const [line, bytes] of [
      ['cp big.bin copy.bin', '600 kB'],
      ['cp -r tree tree2', '400 kB'],
      ['cp -a tree big.bin elsewhere', '1 MB'],
    ] as const) {
      const r = await run(s, token, line);
      expect(r, line).toMatchObject({
        lines: [`Command not allowed: cp would copy ${bytes}, and your quota leaves 0 B.`],
        code: 1008,
      });
    }
    const before = await fs.readdir(home);
    expect(before.sort()).toEqual(['big.bin', 'tree']);
    // What fits is copied.
    await fs.rm(path.join(home, 'tree'), { recursive: true });
    await usage();
    expect(await run(s, token, 'cp -r big.bin small.bin')).toMatchObject({
      lines: ['Command not allowed: cp would copy 600 kB, and your quota leaves 400 kB.'],
    });
    await fs.writeFile(path.join(home, 'small.txt'), 'small\n');
    expect(await run(s, token, 'cp small.txt small2.txt')).toMatchObject({ code: 1000 });
  });

  it('refuses fallocate’s keep-size and range modes, which take space no size shows (a red-team finding)', async () => {
    for (const line of [
      'fallocate -n -l 300M hidden',
      'fallocate -nl300M hidden',
      'fallocate --keep-size -l 300M hidden',
      'fallocate --keep -l 300M hidden',
      'fallocate -z -o 0 -l 300M big.bin',
    ]) {
      const r = await run(s, token, line);
      expect(r.code, line).toBe(1008);
      expect(r.lines[0], line).toMatch(
        /^Command not allowed: fallocate -.* takes disk space the quota cannot see\.$/,
      );
    }
    expect((await fs.readdir(home)).sort()).toEqual(['big.bin']);
    expect(await run(s, token, 'fallocate -l 100000 grown.bin')).toMatchObject({ code: 1000 });
    expect(await usage()).toMatchObject({ used: 700_000 });
  });

  it('counts what a command wrote into a file deleted while it ran, in the trash (a red-team finding)', async () => {
    const pipe = path.join(home, 'pipe');
    execFileSync('mkfifo', [pipe]);
    const command = run(s, token, 'dd if=pipe of=grow.bin bs=1000');
    // dd opens the pipe first and waits for this writer, then makes grow.bin.
    const writer = await fs.open(pipe, 'w');
    try {
      await writer.write(Buffer.alloc(1_000, 'a'));
      for (;;) {
        if ((await fs.stat(path.join(home, 'grow.bin')).catch(() => undefined))?.size === 1_000) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      const deleted = await s.app.inject({
        method: 'DELETE',
        url: '/api/resources/grow.bin',
        headers: { 'x-auth': token },
      });
      expect(deleted.statusCode, deleted.body).toBe(204);
      expect(deleted.headers['x-delete-outcome']).toBe('trash');
      await writer.write(Buffer.alloc(50_000, 'b'));
    } finally {
      await writer.close();
    }
    expect(await command).toMatchObject({ code: 1000 });
    const trash = await s.app.inject({ method: 'GET', url: '/api/trash', headers: { 'x-auth': token } });
    expect(trash.json<Array<{ size: number }>>().map((i) => i.size)).toEqual([51_000]);
    expect(await usage()).toMatchObject({ used: 651_000 });
    const emptied = await s.app.inject({ method: 'DELETE', url: '/api/trash', headers: { 'x-auth': token } });
    expect(emptied.statusCode, emptied.body).toBe(204);
  });

  it('counts files a command made under the names of writes in progress (a red-team finding)', async () => {
    // split names its pieces itself: `.x.fb-000000000000.tmp` looks like a staging file.
    const r = await run(s, token, 'split -d -a 12 --additional-suffix=.tmp -b 300000 big.bin .x.fb-');
    expect(r).toMatchObject({ code: 1000 });
    expect((await fs.readdir(home)).filter((n) => n.startsWith('.x.fb-')).sort()).toEqual([
      '.x.fb-000000000000.tmp',
      '.x.fb-000000000001.tmp',
    ]);
    expect(await usage()).toMatchObject({ used: 1_200_000 });
    expect((await run(s, token, 'ls')).lines[0]).toMatch(
      /^Command not allowed: your scope is over its quota/,
    );
  });

  it('counts install as cp, every source as often as it is named (a red-team finding)', async () => {
    await fs.writeFile(path.join(home, 'f'), Buffer.alloc(100_000, 'f'));
    await fs.mkdir(path.join(home, 'd'));
    await usage();
    // 300 kB is left: four copies of f do not fit, three do.
    const many = await run(s, token, 'install --backup=numbered f f f f d');
    expect(many).toMatchObject({
      lines: ['Command not allowed: install would copy 400 kB, and your quota leaves 300 kB.'],
      code: 1008,
    });
    expect(await fs.readdir(path.join(home, 'd'))).toEqual([]);
    expect(await run(s, token, 'install -m 644 f d')).toMatchObject({ code: 1000 });
    expect(await fs.readdir(path.join(home, 'd'))).toEqual(['f']);
    expect((await usage()).used).toBeLessThanOrEqual(QUOTA);
  });

  it('refuses every command while the scope is over its quota, with a message', async () => {
    await s.ctx.store.users.update({ ...(await s.ctx.store.users.get(carol.id))!, quota: 500_000 });
    for (const line of ['ls', 'cat big.bin', 'rm big.bin']) {
      expect(await run(s, token, line), line).toMatchObject({
        lines: [
          'Command not allowed: your scope is over its quota (600 kB of 500 kB); free some space first.',
        ],
        code: 1008,
      });
    }
    await expect(fs.stat(path.join(home, 'big.bin'))).resolves.toBeTruthy();
  });

  it('lends the room to one command at a time: a second one and an upload get none meanwhile', async () => {
    execFileSync('mkfifo', [path.join(home, 'pipe')]);
    const first = run(s, token, 'dd if=pipe of=first.bin bs=65536');
    // dd has the pipe open for reading once this open returns: it runs, holding the room.
    const writer = await fs.open(path.join(home, 'pipe'), 'w');
    try {
      const second = await run(s, token, 'dd if=big.bin of=second.bin bs=65536');
      expect(second).toMatchObject({ code: 1011, reason: 'file size limit of 0 bytes reached' });
      const up = await upload('up.bin', 10);
      expect(up.statusCode).toBe(507);
      await writer.write(Buffer.alloc(500_000, 'p'));
    } finally {
      await writer.close();
    }
    expect(await first).toMatchObject({ code: 1011, reason: 'file size limit of 400000 bytes reached' });
    expect(await usage()).toMatchObject({ used: QUOTA });
    expect(await onDisk()).toBe(QUOTA);
    // Once the command ended and was counted, the room (none left) is the scope's again.
    expect((await upload('up.bin', 10)).statusCode).toBe(507);
    // A full scope (not over) still runs commands, and what one frees is counted as it ends.
    expect(await run(s, token, 'rm first.bin pipe')).toMatchObject({ code: 1000 });
    expect((await upload('up.bin', 10)).statusCode).toBe(200);
  });

  it('stops a command that passes the quota with many files, each below the room', async () => {
    // split writes a piece of 100 kB per 100 kB it reads from the pipe, and waits for more.
    execFileSync('mkfifo', [path.join(home, 'pipe')]);
    const split = run(s, token, 'split -b 100000 pipe piece-');
    const writer = await fs.open(path.join(home, 'pipe'), 'w');
    try {
      await writer.write(Buffer.alloc(500_000, 'p'));
      // The pipe stays open: only the quota's watch ends the command.
      expect(await split).toMatchObject({
        lines: ['Command stopped: your scope passed its quota.'],
        code: 1011,
        reason: 'quota passed',
      });
    } finally {
      await writer.close().catch(() => undefined);
    }
    // What it wrote until the walk that found it over is counted: every command is refused now.
    expect((await usage()).used).toBeGreaterThan(QUOTA);
    expect((await run(s, token, 'ls')).lines[0]).toMatch(
      /^Command not allowed: your scope is over its quota/,
    );
  });

  it('counts what a command wrote before the next one runs: a split past the quota leaves it over, and refused', async () => {
    // Each piece is below the room, so no file limit cuts it: the count after the command does
    // (unless the quota's watch over it stopped it first, on a slow machine).
    const split = await run(s, token, 'split -b 100000 big.bin piece-');
    if (split.code !== 1000) expect(split).toMatchObject({ code: 1011, reason: 'quota passed' });
    expect(await onDisk()).toBeGreaterThan(QUOTA);
    expect((await run(s, token, 'ls')).lines).toEqual([
      expect.stringMatching(
        /^Command not allowed: your scope is over its quota \(1\.[1-2] MB of 1 MB\); free some space first\.$/,
      ),
    ]);
    expect((await upload('up.bin', 10)).statusCode).toBe(507);
  });
});
