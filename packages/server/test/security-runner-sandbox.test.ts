import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { createAccount } from '../src/auth/accounts.js';
import { hashPassword } from '../src/auth/passwords.js';
import { defaultConfig } from '../src/config/defaults.js';
import type { ServerConfig } from '../src/config/types.js';
import type { ServerContext } from '../src/services.js';
import { serverPaths } from '../src/files/private.js';
import { quickSetup } from '../src/setup.js';
import { openStore, type Store } from '../src/store/index.js';
import type { StoredUser } from '../src/store/users.js';
import { TEST_BCRYPT_COST } from './helpers.js';
import { haveTool } from './tools.js';

/**
 * Security catalogue, runner class (issue 24, items 1 and 15), tried through the real server as
 * the attacker did: File Browser's default layout (the database inside the served folder), a
 * non-admin user with execute and grep, the recursive tools a walk takes into the server's own
 * files. With the sandbox (bubblewrap) the private paths are empty where the command looks; where
 * no sandbox can be had (forced here with `execSandbox: "off"`), the walks are refused.
 */

const PASSWORD = 'user-password-for-tests';
const MARKERS = { trash: 'TRASHED-MARKER-7d1f', staged: 'STAGED-MARKER-91ac', cache: 'CACHE-MARKER-3b2e' };
const PERM = {
  admin: false,
  execute: true,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};

interface Server {
  app: FastifyInstance;
  ctx: ServerContext;
  store: Store;
  base: string;
  root: string;
  url: string;
}

type Mode = 'bwrap' | 'off';

/** The server as File Browser's defaults lay it out: `filebrowser.db` inside the served folder. */
async function startServer(sandbox: Mode, extra: Partial<ServerConfig> = {}): Promise<Server> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-sandbox-')));
  const root = path.join(base, 'root');
  await fs.mkdir(root);
  const dbFile = path.join(root, 'filebrowser.db');
  const config = {
    ...defaultConfig(),
    root,
    database: dbFile,
    cacheDir: '',
    webDist: path.join(base, 'web'),
    bcryptCost: TEST_BCRYPT_COST,
    disableExec: false,
    execSandbox: sandbox,
    ...extra,
  } as ServerConfig;
  const store = openStore(dbFile);
  const { app, ctx } = await buildApp(config, store);
  await quickSetup(ctx, {
    username: 'admin',
    passwordHash: await hashPassword(PASSWORD, TEST_BCRYPT_COST),
    noauth: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { app, ctx, store, base, root, url: `ws://127.0.0.1:${port}` };
}

async function stopServer(s: Server): Promise<void> {
  await s.app.close();
  s.store.close();
  await fs.rm(s.base, { recursive: true, force: true });
}

interface Outcome {
  lines: string[];
  code?: number;
  reason?: string;
}

/** Runs one command line through the command websocket and collects what comes back. */
function run(s: Server, token: string, line: string, folder = '/'): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${s.url}/api/command${folder}`, { headers: { 'x-auth': token } });
    const lines: string[] = [];
    ws.on('open', () => ws.send(line));
    ws.on('message', (data) => lines.push((data as Buffer).toString('utf8')));
    ws.on('close', (code, reason) => resolve({ lines, code, reason: reason.toString() }));
    ws.on('error', reject);
  });
}

async function login(s: Server, username: string): Promise<string> {
  const res = await s.app.inject({
    method: 'POST',
    url: '/api/login',
    payload: { username, password: PASSWORD },
  });
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** Every file below `dir` with its bytes (links and special files skipped). */
async function filesBelow(dir: string): Promise<Array<{ file: string; bytes: Buffer }>> {
  const out: Array<{ file: string; bytes: Buffer }> = [];
  for (const rel of await fs.readdir(dir, { recursive: true })) {
    const file = path.join(dir, rel);
    const st = await fs.lstat(file);
    if (st.isFile()) out.push({ file, bytes: await fs.readFile(file) });
  }
  return out;
}

describe.each(['bwrap', 'off'] as const)('the reported attack (sandbox: %s)', (sandbox) => {
  let s: Server;
  let bobToken: string;
  /** What a leak would show: the signing key, a live session id, other users' private bytes. */
  let secrets: string[];
  let privates: ReturnType<typeof serverPaths>;

  const refusedWithoutSandbox = (o: Outcome, command: string) => {
    expect(o.code).toBe(1008);
    expect(o.lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Command not allowed: ${command} walks folders, and your scope holds the server's own files \\(its database, trash, uploads or previews\\): without the runner's sandbox \\(bubblewrap\\) this server refuses that there\\.$`,
        ),
      ),
    ]);
  };
  const leaksNothing = (text: string) => {
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toContain('SQLite format 3');
  };

  beforeAll(async () => {
    s = await startServer(sandbox);
    privates = serverPaths(s.ctx.config);
    const alice = await createAccount(
      s.ctx,
      { username: 'alice', scope: '/users/alice', perm: PERM, commands: [] },
      PASSWORD,
      'cli',
    );
    await createAccount(
      s.ctx,
      {
        username: 'bob',
        scope: '/',
        perm: PERM,
        commands: ['grep', 'du', 'ls', 'cp', 'tar', 'find', 'cat', 'mv', 'split'],
      },
      PASSWORD,
      'cli',
    );
    s.store.settings.save({ ...s.store.settings.get(), unsafeCommands: ['tar'] });
    const adminToken = await login(s, 'admin');
    const aliceToken = await login(s, 'alice');
    bobToken = await login(s, 'bob');
    const sid = (
      JSON.parse(Buffer.from(adminToken.split('.')[1]!, 'base64url').toString()) as { sid: string }
    ).sid;
    secrets = [s.store.settings.get().key, sid, ...Object.values(MARKERS)];

    // Alice's deleted file, in the trash that lies in the served folder.
    const as = (token: string) => ({ 'x-auth': token });
    const put = await s.app.inject({
      method: 'POST',
      url: '/api/resources/gone.txt?override=true',
      headers: as(aliceToken),
      payload: `${MARKERS.trash}\n`,
    });
    expect(put.statusCode).toBe(200);
    const del = await s.app.inject({
      method: 'DELETE',
      url: '/api/resources/gone.txt',
      headers: as(aliceToken),
    });
    expect(del.statusCode).toBe(204);
    // Alice's half-done resumable upload, staged in the served folder.
    const create = await s.app.inject({
      method: 'POST',
      url: '/api/tus/big.bin',
      headers: { ...as(aliceToken), 'tus-resumable': '1.0.0', 'upload-length': '1000' },
    });
    expect(create.statusCode).toBe(201);
    const patch = await s.app.inject({
      method: 'PATCH',
      url: '/api/tus/big.bin',
      headers: {
        ...as(aliceToken),
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      payload: `${MARKERS.staged}\n`,
    });
    expect(patch.statusCode).toBe(204);
    // A preview of someone's picture in the cache.
    await fs.mkdir(privates.cacheDir, { recursive: true });
    await fs.writeFile(path.join(privates.cacheDir, 'preview.jpg'), `${MARKERS.cache}\n`);
    await fs.mkdir(path.join(s.root, 'docs'));
    await fs.writeFile(path.join(s.root, 'docs/readme.txt'), 'an ordinary file\n');
    expect(alice.id).toBeGreaterThan(1);
  });

  afterAll(() => stopServer(s));

  it('grep -a -r finds nothing of the database, the trash, the uploads or the cache', async () => {
    const key = await run(s, bobToken, `grep -a -r -o "key\\":\\"[A-Za-z0-9+/=]*" .`);
    const any = await run(s, bobToken, `grep -a -r -l -F -e ${secrets.join(' -e ')} .`);
    if (sandbox === 'off') {
      refusedWithoutSandbox(key, 'grep -r');
      refusedWithoutSandbox(any, 'grep -r');
      return;
    }
    // grep says 1 when nothing matched.
    expect(key).toMatchObject({ lines: [], code: 1011, reason: 'exit status 1' });
    expect(any).toMatchObject({ lines: [], code: 1011, reason: 'exit status 1' });
    // The walk itself worked: an ordinary file is found.
    const found = await run(s, bobToken, 'grep -r -l ordinary .');
    expect(found).toMatchObject({ lines: ['./docs/readme.txt'], code: 1000 });
  });

  it('du -a and ls -R see no private file’s bytes and nothing inside the private folders', async () => {
    const du = await run(s, bobToken, 'du -ab .');
    const ls = await run(s, bobToken, 'ls -RA');
    if (sandbox === 'off') {
      refusedWithoutSandbox(du, 'du');
      refusedWithoutSandbox(ls, 'ls -R');
      return;
    }
    expect(du.code).toBe(1000);
    expect(ls.code).toBe(1000);
    const inside = (name: string) =>
      [privates.trashDir, privates.uploadsDir, privates.cacheDir].some((d) =>
        name.startsWith(`./${path.basename(d)}/`),
      );
    for (const line of du.lines) {
      const [size, name] = line.split('\t') as [string, string];
      expect(inside(name), line).toBe(false);
      if (path.basename(name).startsWith('filebrowser.db')) expect(size, line).toBe('0');
    }
    expect(du.lines.filter((l) => l.endsWith('\t./docs/readme.txt'))).toHaveLength(1);
    leaksNothing(ls.lines.join('\n'));
    for (const d of [privates.trashDir, privates.uploadsDir, privates.cacheDir]) {
      const at = ls.lines.indexOf(`./${path.basename(d)}:`);
      // A private folder is listed as empty: its heading is followed by a blank line or the end.
      if (at >= 0) expect(ls.lines[at + 1] ?? '', d).toBe('');
    }
    expect(ls.lines.join('\n')).not.toMatch(/gone\.txt|\.part|preview\.jpg/);
  });

  it('cp -r . x and tar cf copy no private byte', async () => {
    const cp = await run(s, bobToken, 'cp -r . copy');
    const tar = await run(s, bobToken, 'tar -cf out.tar docs .');
    if (sandbox === 'off') {
      refusedWithoutSandbox(cp, 'cp -r');
      refusedWithoutSandbox(tar, 'tar');
      await expect(fs.stat(path.join(s.root, 'copy'))).rejects.toThrow();
      await expect(fs.stat(path.join(s.root, 'out.tar'))).rejects.toThrow();
      return;
    }
    // cp copies what comes before the copy itself in its order, then stops: "cannot copy . into itself".
    expect(cp.lines.join('\n')).toMatch(/cannot copy a directory, '\.', into itself/);
    for (const f of await filesBelow(path.join(s.root, 'copy'))) leaksNothing(f.bytes.toString('latin1'));
    // tar takes everything: the private paths are in it, empty.
    const archive = (await fs.readFile(path.join(s.root, 'out.tar'))).toString('latin1');
    expect(archive).toContain('an ordinary file');
    for (const name of [
      './filebrowser.db\0',
      './filebrowser.db-wal\0',
      `./${path.basename(privates.trashDir)}/\0`,
    ]) {
      expect(archive).toContain(name);
    }
    leaksNothing(archive);
    expect(archive).not.toMatch(/gone\.txt|\.part\0|preview\.jpg/);
    // The server's own files are still whole, and the empty files that held the place of missing
    // ones (a planted -journal would be rolled into the database at the next start) are gone.
    expect((await fs.stat(s.ctx.config.database)).size).toBeGreaterThan(0);
    await expect(fs.readdir(privates.trashDir)).resolves.not.toEqual([]);
    await expect(fs.readdir(s.root)).resolves.not.toContain('filebrowser.db-journal');
    await expect(fs.readdir(s.root)).resolves.not.toContain('filebrowser.db.restoring');
  });

  it('no command makes a file at one of the server’s names: mv, cp, split', async () => {
    // A hot journal beside the database is rolled into it at the next start; the -wal is live.
    const plant = `${'P'.repeat(100)}\n`.repeat(120);
    await fs.mkdir(path.join(s.root, 'plant'));
    await fs.writeFile(path.join(s.root, 'plant/filebrowser.db-journal'), plant);
    await fs.writeFile(path.join(s.root, 'plant/data'), plant);
    const wal = await fs.readFile(`${s.ctx.config.database}-wal`);
    const mv = await run(s, bobToken, 'mv plant/filebrowser.db-journal .');
    expect(mv).toMatchObject({
      lines: ["Command not allowed: mv would write /filebrowser.db-journal, one of the server's own files."],
      code: 1008,
    });
    // cp -r is a walk, refused earlier without a sandbox.
    for (const line of [
      'cp -t . plant/filebrowser.db-journal',
      ...(sandbox === 'off' ? [] : ['cp -rT plant .']),
    ]) {
      expect(await run(s, bobToken, line), line).toMatchObject({
        lines: [
          "Command not allowed: cp would write /filebrowser.db-journal, one of the server's own files.",
        ],
        code: 1008,
      });
    }
    // The twelfth piece of split -a 2 ends in "al": the prefixes make -journal and -wal.
    for (const prefix of ['filebrowser.db-journ', 'filebrowser.db-w']) {
      const split = await run(s, bobToken, `split -n 12 -a 2 plant/data ${prefix}`);
      if (sandbox === 'off') {
        expect(split.code).toBe(1008);
        expect(split.lines).toEqual([
          "Command not allowed: split names the files it writes itself, and your scope holds the server's own files (its database, trash, uploads or previews): without the runner's sandbox (bubblewrap) this server refuses that there.",
        ]);
      } else {
        // The piece that would be the server's file cannot be written; the others are.
        expect(split.code).toBe(1011);
        expect(split.lines.join('\n')).toMatch(/filebrowser\.db-(journ|w)al/);
        await expect(fs.stat(path.join(s.root, `${prefix}ak`))).resolves.toBeTruthy();
      }
    }
    await expect(fs.readdir(s.root)).resolves.not.toContain('filebrowser.db-journal');
    expect((await fs.readFile(`${s.ctx.config.database}-wal`)).toString('latin1')).not.toContain('PPPP');
    expect((await fs.readFile(`${s.ctx.config.database}-wal`)).subarray(0, 32)).toEqual(wal.subarray(0, 32));
    expect(s.store.settings.get().key).toBe(secrets[0]);
  });

  it('a plain command still runs, and a named private path is still refused', async () => {
    expect(await run(s, bobToken, 'cat docs/readme.txt')).toMatchObject({
      lines: ['an ordinary file'],
      code: 1000,
    });
    expect((await run(s, bobToken, 'cat filebrowser.db')).lines).toEqual([
      'Command not allowed: the path "filebrowser.db" is hidden by your rules.',
    ]);
  });
});

describe('a rollback journal planted beside the database', () => {
  it('is never rolled into it at the next start', async () => {
    const s = await startServer('off');
    const dbFile = s.ctx.config.database;
    const adminHash = s.store.users.get(1)!.passwordHash;
    await s.app.close();
    s.store.close();
    try {
      // The attacker's database: a copy with their own administrator password. A transaction
      // left open on it spills its pages' earlier state, theirs, into a journal: a hot journal
      // SQLite rolls into whatever database it finds it beside.
      const evil = path.join(s.base, 'evil.db');
      await fs.copyFile(dbFile, evil);
      const e = new Database(evil);
      e.pragma('journal_mode = DELETE');
      e.prepare('UPDATE users SET password_hash = ? WHERE id = 1').run('attacker-chosen-hash');
      e.pragma('cache_size = 1');
      e.exec('BEGIN EXCLUSIVE');
      e.prepare('UPDATE users SET password_hash = ? WHERE id = 1').run('anything');
      e.exec('CREATE TABLE filler (x TEXT)');
      const insert = e.prepare('INSERT INTO filler VALUES (?)');
      for (let i = 0; i < 2000; i++) insert.run('z'.repeat(500));
      await fs.copyFile(`${evil}-journal`, `${dbFile}-journal`);
      e.exec('ROLLBACK');
      e.close();

      const store = openStore(dbFile);
      try {
        expect(store.users.get(1)!.passwordHash).toBe(adminHash);
      } finally {
        store.close();
      }
      await expect(fs.stat(`${dbFile}-journal`)).rejects.toThrow();
    } finally {
      await fs.rm(s.base, { recursive: true, force: true });
    }
  });
});

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
        commands: ['cp', 'dd', 'ls', 'split', 'cat', 'rm'],
        quota: QUOTA,
      },
      PASSWORD,
      'cli',
    );
    token = await login(s, 'carol');
    home = path.join(s.root, 'users/carol');
  });

  beforeEach(async () => {
    s.ctx.store.users.update({ ...s.ctx.store.users.get(carol.id)!, quota: QUOTA });
    for (const name of await fs.readdir(home)) await fs.rm(path.join(home, name), { recursive: true });
    expect(await usage()).toMatchObject({ used: 0 });
    expect((await upload('big.bin', 600_000)).statusCode).toBe(200);
    expect(await usage()).toMatchObject({ used: 600_000, quota: QUOTA });
  });

  afterAll(() => stopServer(s));

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

  it('refuses every command while the scope is over its quota, with a message', async () => {
    s.ctx.store.users.update({ ...s.ctx.store.users.get(carol.id)!, quota: 500_000 });
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

describe.skipIf(!haveTool('bwrap', 'the command runner’s sandbox'))('what a sandboxed program sees', () => {
  it('nothing outside its scope: no other folder, no database, no /etc/shadow, no network, no host process', async () => {
    const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fb-peek-')));
    const bin = path.join(base, 'bin');
    await fs.mkdir(bin);
    const s = await startServer('bwrap', { execPath: `${bin}:/usr/bin:/bin` });
    try {
      const dave = await createAccount(
        s.ctx,
        { username: 'dave', scope: '/users/dave', perm: PERM, commands: ['peek'] },
        PASSWORD,
        'cli',
      );
      await fs.mkdir(path.join(s.root, 'users/erin'), { recursive: true });
      await fs.writeFile(path.join(s.root, 'users/erin/diary.txt'), 'erin’s\n');
      const { port } = s.app.server.address() as AddressInfo;
      // An administrator's program, which reads what it likes: no argument check sees its paths.
      const looks = [
        s.ctx.config.database,
        path.join(s.root, 'users/erin/diary.txt'),
        '/etc/shadow',
        '/root',
        '/home',
        '/var',
        path.join(base, 'bin-sibling'),
      ];
      await fs.writeFile(path.join(base, 'bin-sibling'), 'x');
      await fs.writeFile(
        path.join(bin, 'peek'),
        [
          '#!/bin/sh',
          ...looks.map((p) => `[ -e '${p}' ] && echo 'seen ${p}'`),
          `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 2)" 2>/dev/null && echo 'network reached'`,
          // The folders on the way to the scope are there, holding nothing but that way.
          `echo "served folder: $(ls -A '${s.root}') / $(ls -A '${s.root}/users')"`,
          `echo "processes $(ls /proc | grep -c '^[0-9]')"`,
          'grep CapEff /proc/self/status',
          'pwd',
          'exit 0',
        ].join('\n') + '\n',
        { mode: 0o755 },
      );
      const token = await login(s, 'dave');
      const r = await run(s, token, 'peek');
      expect(r).toMatchObject({ code: 1000 });
      expect(r.lines).toEqual([
        'served folder: users / dave',
        // sh, peek's subshell, ls and grep, the sandbox's own first process: a handful.
        expect.stringMatching(/^processes [1-9]$/),
        'CapEff:\t0000000000000000',
        path.join(s.root, 'users/dave'),
      ]);
      expect(dave.id).toBeGreaterThan(1);
    } finally {
      await stopServer(s);
      await fs.rm(base, { recursive: true, force: true });
    }
  });
});
