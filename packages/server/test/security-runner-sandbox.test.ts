import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createAccount } from '../src/auth/accounts.js';
import { serverPaths } from '../src/files/access/private.js';
import { openStore } from '../src/store/index.js';
import { haveTool } from './tools.js';
import {
  PASSWORD,
  MARKERS,
  PERM,
  type Server,
  startServer,
  stopServer,
  type Outcome,
  run,
  login,
  filesBelow,
} from './security-runner-helpers.js';

/**
 * Security catalogue, runner class (the server's own files and other users' ones), tried through
 * the real server as the attacker did: File Browser's default layout (the database inside the
 * served folder), a non-admin user with execute and grep, the recursive tools a walk takes into
 * the server's own files. With the sandbox (bubblewrap) the private paths are empty where the
 * command looks; where no sandbox can be had (forced here with `execSandbox: "off"`), no command
 * runs in a scope that holds them. Commands and quotas are in security-runner-quota.test.ts.
 */

const NO_COMMAND_WITHOUT_SANDBOX =
  "Command not allowed: your scope holds the server's own files (its database, trash, uploads or previews), and without the runner's sandbox (bubblewrap) this server runs no command there.";

describe.each(['bwrap', 'off'] as const)('the reported attack (sandbox: %s)', (sandbox) => {
  let s: Server;
  let bobToken: string;
  /** What a leak would show: the signing key, a live session id, other users' private bytes. */
  let secrets: string[];
  let privates: ReturnType<typeof serverPaths>;

  const refusedWithoutSandbox = (o: Outcome) => {
    expect(o.code).toBe(1008);
    expect(o.lines).toEqual([NO_COMMAND_WITHOUT_SANDBOX]);
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
    await s.store.settings.save({ ...s.store.settings.get(), unsafeCommands: ['tar'] });
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
    // --regexp= rather than -e: a session id may start with "-" and hold an "R", which the runner
    // reads (on purpose) as grep's refused -R.
    const any = await run(s, bobToken, `grep -a -r -l -F ${secrets.map((x) => `--regexp=${x}`).join(' ')} .`);
    if (sandbox === 'off') {
      refusedWithoutSandbox(key);
      refusedWithoutSandbox(any);
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
      refusedWithoutSandbox(du);
      refusedWithoutSandbox(ls);
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
      refusedWithoutSandbox(cp);
      refusedWithoutSandbox(tar);
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
    if (sandbox === 'off') {
      for (const line of [
        'mv plant/filebrowser.db-journal .',
        'cp -t . plant/filebrowser.db-journal',
        'split -n 12 -a 2 plant/data filebrowser.db-w',
        // A backup suffix turns an ordinary name into one of the server's (a red-team finding).
        'mv --backup --suffix=.db-wal plant/data filebrowser',
      ]) {
        refusedWithoutSandbox(await run(s, bobToken, line));
      }
      await expect(fs.readdir(s.root)).resolves.not.toContain('filebrowser.db-journal');
      expect((await fs.readFile(`${s.ctx.config.database}-wal`)).subarray(0, 32)).toEqual(
        wal.subarray(0, 32),
      );
      return;
    }
    const mv = await run(s, bobToken, 'mv plant/filebrowser.db-journal .');
    expect(mv).toMatchObject({
      lines: ["Command not allowed: mv would write /filebrowser.db-journal, one of the server's own files."],
      code: 1008,
    });
    // cp -r is a walk, refused earlier without a sandbox.
    for (const line of ['cp -t . plant/filebrowser.db-journal', 'cp -rT plant .']) {
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
      // The piece that would be the server's file cannot be written; the others are.
      expect(split.code).toBe(1011);
      expect(split.lines.join('\n')).toMatch(/filebrowser\.db-(journ|w)al/);
      await expect(fs.stat(path.join(s.root, `${prefix}ak`))).resolves.toBeTruthy();
    }
    await expect(fs.readdir(s.root)).resolves.not.toContain('filebrowser.db-journal');
    expect((await fs.readFile(`${s.ctx.config.database}-wal`)).toString('latin1')).not.toContain('PPPP');
    expect((await fs.readFile(`${s.ctx.config.database}-wal`)).subarray(0, 32)).toEqual(wal.subarray(0, 32));
    expect(s.store.settings.get().key).toBe(secrets[0]);
  });

  it('a plain command still runs, and a named private path is still refused', async () => {
    if (sandbox === 'off') {
      refusedWithoutSandbox(await run(s, bobToken, 'cat docs/readme.txt'));
      return;
    }
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
    const adminHash = (await s.store.users.get(1))!.passwordHash;
    await s.app.close();
    await s.store.close();
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

      const store = await openStore(dbFile);
      try {
        expect((await store.users.get(1))!.passwordHash).toBe(adminHash);
      } finally {
        await store.close();
      }
      await expect(fs.stat(`${dbFile}-journal`)).rejects.toThrow();
    } finally {
      await fs.rm(s.base, { recursive: true, force: true });
    }
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
          // The host's kernel settings: the current value written back, which would change nothing.
          'v=$(cat /proc/sys/kernel/printk_ratelimit) && (echo "$v" > /proc/sys/kernel/printk_ratelimit) 2>/dev/null && echo "kernel settings writable"',
          '[ -w /proc/sysrq-trigger ] && echo "magic keys writable"',
          `echo "tmp $(df -k --output=size /tmp | tail -1 | tr -d ' ') KiB"`,
          `echo "shm $(df -k --output=size /dev/shm | tail -1 | tr -d ' ') KiB"`,
          '(echo x > /dev/planted) 2>/dev/null && echo "dev writable"',
          'echo quiet > /dev/null && echo "null writable"',
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
        'tmp 262144 KiB',
        'shm 65536 KiB',
        'null writable',
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

describe('without a sandbox', () => {
  it('runs no command in a scope that holds the server’s files, and runs them in one that does not', async () => {
    const s = await startServer('off');
    try {
      await createAccount(
        s.ctx,
        {
          username: 'rooty',
          scope: '/',
          perm: PERM,
          commands: ['install', 'diff', 'cat', 'tail', 'mv', 'ln'],
        },
        PASSWORD,
        'cli',
      );
      await createAccount(
        s.ctx,
        { username: 'homey', scope: '/users/homey', perm: PERM, commands: ['cat', 'tail'] },
        PASSWORD,
        'cli',
      );
      const rooty = await login(s, 'rooty');
      const homey = await login(s, 'homey');
      await fs.mkdir(path.join(s.root, 'carol/x'), { recursive: true });
      await fs.writeFile(path.join(s.root, 'carol/filebrowser.db'), 'x');
      await fs.writeFile(path.join(s.root, 'carol/data'), 'x');
      const before = await fs.readFile(s.ctx.config.database);
      // What the red team got through with argument checks alone: a folder and a name that meet
      // at the database, a backup suffix, a link, a relative path a moved folder would re-aim.
      for (const line of [
        'install carol/filebrowser.db .',
        'diff -a carol/filebrowser.db-wal .',
        'mv --backup --suffix=.db-wal carol/data filebrowser',
        'ln -f -b -S .db.before-restore carol/data filebrowser',
        'cat carol/data',
      ]) {
        const r = await run(s, rooty, line);
        expect(r, line).toMatchObject({ lines: [NO_COMMAND_WITHOUT_SANDBOX], code: 1008 });
      }
      const x = await run(s, rooty, 'tail -c +1 ../filebrowser.db', '/carol/x');
      expect(x).toMatchObject({ lines: [NO_COMMAND_WITHOUT_SANDBOX], code: 1008 });
      expect(await fs.readFile(s.ctx.config.database)).toEqual(before);
      await expect(fs.readdir(s.root)).resolves.not.toContain('filebrowser.db.before-restore');
      // A scope without them: commands run.
      await fs.writeFile(path.join(s.root, 'users/homey/note.txt'), 'mine\n');
      expect(await run(s, homey, 'cat note.txt')).toMatchObject({ lines: ['mine'], code: 1000 });
    } finally {
      await stopServer(s);
    }
  });

  it('refuses ".." in any argument: a folder moved while the command runs would re-aim it outside the scope', async () => {
    const s = await startServer('off');
    try {
      await createAccount(
        s.ctx,
        { username: 'homey', scope: '/users/homey', perm: PERM, commands: ['cat', 'tail', 'gzip'] },
        PASSWORD,
        'cli',
      );
      const homey = await login(s, 'homey');
      await fs.mkdir(path.join(s.root, 'users/homey/x/y'), { recursive: true });
      await fs.mkdir(path.join(s.root, 'users/bob'), { recursive: true });
      await fs.writeFile(path.join(s.root, 'users/bob/secret.txt'), 'bob only\n');
      await fs.writeFile(path.join(s.root, 'users/homey/x/a.txt'), 'a\n');
      // The red team's shape: checked as /x/secret.txt from /x/y, then /x/y renamed to /y so
      // that ../../ leaves the scope. Refused before it starts, whatever it names.
      for (const [line, cwd] of [
        ['tail -F ../../bob/secret.txt', '/x/y'],
        ['gzip -1 ../../bob/secret.txt', '/x/y'],
        ['cat ../a.txt', '/x/y'],
        ['cat x/../x/a.txt', '/'],
        ['cat --files0-from=x/../a', '/'],
      ] as const) {
        const r = await run(s, homey, line, cwd);
        expect(r.code, line).toBe(1008);
        expect(r.lines[0], line).toMatch(
          /^Command not allowed: the path .* goes up with "\.\.": without the runner's sandbox \(bubblewrap\), a folder moved while the command runs would make it lead elsewhere\.$/,
        );
      }
      await expect(fs.readFile(path.join(s.root, 'users/bob/secret.txt'), 'utf8')).resolves.toBe(
        'bob only\n',
      );
      expect(await run(s, homey, 'cat a.txt', '/x')).toMatchObject({ lines: ['a'], code: 1000 });
    } finally {
      await stopServer(s);
    }
  });

  it('names no program file of the served folder in any argument: a program given it would run it as the server', async () => {
    const s = await startServer('off');
    try {
      await createAccount(
        s.ctx,
        { username: 'exy', scope: '/users/exy', perm: PERM, commands: ['cat', 'chmod'] },
        PASSWORD,
        'cli',
      );
      const exy = await login(s, 'exy');
      await fs.mkdir(path.join(s.root, 'users/exy'), { recursive: true });
      await fs.writeFile(path.join(s.root, 'users/exy/evil'), '#!/bin/sh\necho ran\n');
      expect(await run(s, exy, 'cat evil')).toMatchObject({ lines: ['#!/bin/sh', 'echo ran'], code: 1000 });
      expect(await run(s, exy, 'chmod +x evil')).toMatchObject({ code: 1000 });
      const r = await run(s, exy, 'cat ./evil');
      expect(r.code).toBe(1008);
      expect(r.lines[0]).toMatch(
        /^Command not allowed: the path "\.\/evil" is a program \(its execute bit is set\)/,
      );
    } finally {
      await stopServer(s);
    }
  });
});
