import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hash } from '@node-rs/bcrypt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { runCli, type CliIO } from '../src/cli/index.js';
import { loadConfig } from '../src/config/load.js';
import type { ConfigPlaces } from '../src/config/sources.js';
import { openStore, type Store } from '../src/store/index.js';

let dir: string;
let places: ConfigPlaces;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-cli-users-'));
  fs.mkdirSync(path.join(dir, 'home'));
  fs.mkdirSync(path.join(dir, 'files'));
  places = { cwd: dir, home: path.join(dir, 'home'), systemDir: path.join(dir, 'etc') };
  expect((await cli(['config', 'init', '-r', 'files'])).code).toBe(0);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI in this process on the temporary folder's ./filebrowser.db. */
async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
    places,
    ownsProcess: false,
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

async function expectError(argv: string[], message: RegExp) {
  const r = await cli(argv);
  expect(r.code).toBe(1);
  expect(r.err).toMatch(message);
  expect(r.err.trim().split('\n')).toHaveLength(1);
}

async function withStore<T>(fn: (store: Store) => T | Promise<T>, db = 'filebrowser.db'): Promise<T> {
  const store = await openStore(path.join(dir, db));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Signs in through the real HTTP API on the given database. */
async function apiLogin(username: string, password: string, db = 'filebrowser.db'): Promise<number> {
  const store = await openStore(path.join(dir, db));
  const config = loadConfig([], {}, { ...places, persisted: store.settings.getServer() });
  const { app } = await buildApp(config, store);
  try {
    const res = await app.inject({ method: 'POST', url: '/api/login', payload: { username, password } });
    return res.statusCode;
  } finally {
    await app.close();
    await store.close();
  }
}

/** A hash as File Browser (Go) writes it: cost 10 with the $2a$ prefix. */
async function goHash(password: string): Promise<string> {
  return (await hash(password, { cost: 10 })).replace(/^\$2b\$/, '$2a$');
}

describe('users add, ls, find, update, rm', () => {
  it('adds users that can sign in, with the given flags over the defaults', async () => {
    const add = await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin']);
    expect(add.code).toBe(0);
    const bob = await cli([
      'users',
      'add',
      'bob',
      'bobs-long-password',
      '--scope',
      '/bob',
      '--locale',
      'de',
      '--perm.delete=false',
      '--lockPassword',
      '--commands',
      'ls,git',
      '--sorting.by',
      'size',
      '--viewMode',
      'mosaic gallery',
    ]);
    expect(bob.err).toBe('');
    expect(fs.statSync(path.join(dir, 'files', 'bob')).isDirectory()).toBe(true);
    const saved = await withStore(async (s) => (await s.users.getByUsername('bob'))!);
    expect(saved).toMatchObject({
      scope: '/bob',
      locale: 'de',
      lockPassword: true,
      commands: ['ls', 'git'],
      sorting: { by: 'size', asc: false },
      viewMode: 'mosaic gallery',
    });
    expect(saved.perm).toMatchObject({ admin: false, delete: false, create: true });
    expect(await apiLogin('bob', 'bobs-long-password')).toBe(200);

    const ls = await cli(['users', 'ls']);
    expect(ls.out).toMatch(/^ID\s+Username/);
    expect(ls.out).toMatch(/\n1\s+admin/);
    expect(ls.out).toMatch(/\n2\s+bob\s+\/bob\s+de/);
    expect((await cli(['users', 'find', 'bob'])).out).toMatch(/\n2\s+bob/);
    expect((await cli(['users', 'find', '1'])).out).toMatch(/\n1\s+admin/);
  });

  it('updates only the fields given by flags', async () => {
    await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin']);
    await cli([
      'users',
      'add',
      'carol',
      'carols-long-password',
      '--lockPassword',
      '--hideDotfiles',
      '--dateFormat',
      '--aceEditorTheme',
      'monokai',
    ]);
    const r = await cli(['users', 'update', 'carol', '--locale', 'fr', '-p', 'carols-new-password']);
    expect(r.err).toBe('');
    const carol = await withStore(async (s) => (await s.users.getByUsername('carol'))!);
    // File Browser reset these three when their flags were left out; they stay here.
    expect(carol).toMatchObject({
      locale: 'fr',
      lockPassword: true,
      hideDotfiles: true,
      dateFormat: true,
      aceEditorTheme: 'monokai',
    });
    expect(await apiLogin('carol', 'carols-new-password')).toBe(200);
    expect(await apiLogin('carol', 'carols-long-password')).toBe(403);

    await cli([
      'users',
      'update',
      String(carol.id),
      '-u',
      'caroline',
      '--aceEditorTheme',
      'dracula',
      '--perm.share=false',
    ]);
    const renamed = await withStore(async (s) => (await s.users.get(carol.id))!);
    expect(renamed).toMatchObject({ username: 'caroline', aceEditorTheme: 'dracula', locale: 'fr' });
    expect(renamed.perm).toMatchObject({ share: false, download: true });
  });

  it('sets a quota with --quota, for a user and for the defaults of new users', async () => {
    expect((await cli(['config', 'set', '--quota', '5000'])).code).toBe(0);
    expect((await cli(['users', 'add', 'quinn', 'quinns-long-password'])).err).toBe('');
    expect(await withStore(async (s) => (await s.users.getByUsername('quinn'))!.quota)).toBe(5000);
    expect((await cli(['users', 'update', 'quinn', '--quota', '0'])).err).toBe('');
    expect(await withStore(async (s) => (await s.users.getByUsername('quinn'))!.quota)).toBe(0);
    await expectError(['users', 'update', 'quinn', '--quota', '-1'], /quota/);
  });

  it('reports user errors with one line and exit code 1', async () => {
    await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin']);
    await expectError(['users', 'add', 'eve', 'short'], /password is too short, minimum length is 12/);
    await expectError(['users', 'add', 'eve', 'password1234'], /password is too easy/);
    await expectError(['users', 'add', 'ADMIN', 'another-long-password'], /already exists/);
    await expectError(
      ['users', 'add', 'eve', 'another-long-password', '--scope', '../x'],
      /scope must stay inside/,
    );
    await expectError(['users', 'add', 'eve', 'another-long-password', '--viewMode', 'grid'], /--viewMode/);
    await expectError(['users', 'add', 'eve'], /missing required argument 'password'/);
    await expectError(['users', 'find', 'nobody'], /user "nobody" does not exist/);
    await expectError(['users', 'update', '42', '--locale', 'fr'], /user "42" does not exist/);
    await expectError(['users', 'update', 'admin'], /nothing to change/);
    await expectError(
      ['users', 'update', 'admin', '--perm.admin=false'],
      /last administrator cannot be demoted/,
    );
    await expectError(['users', 'rm', 'admin'], /last administrator cannot be deleted/);
    await expectError(['users', 'ls', '--wat'], /unknown option '--wat'/);
    expect((await cli(['users', 'add', 'eve', 'another-long-password'])).code).toBe(0);
    expect((await cli(['users', 'rm', 'eve'])).out).toBe('User eve deleted.\n');
    expect(await withStore(async (s) => await s.users.getByUsername('eve'))).toBeUndefined();
  });
});

describe('users export and import', () => {
  it('round-trips users with their password hashes (JSON and YAML)', async () => {
    await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin']);
    await cli(['users', 'add', 'dave', 'daves-long-password', '--scope', '/dave', '--hideDotfiles']);
    await cli(['rules', 'add', '-u', 'dave', '-r', '\\.tmp$']);
    for (const file of ['users.json', 'users.yml']) {
      expect((await cli(['users', 'export', file])).code).toBe(0);
      const db = `${file}.db`;
      expect((await cli(['config', 'init', '-d', db, '-r', 'files'])).code).toBe(0);
      const r = await cli(['users', 'import', '-d', db, file]);
      expect(r.err).toBe('');
      expect(r.out).toContain('Imported 2 users');
      const strip = (u: { updatedAt: number }) => ({ ...u, updatedAt: 0 });
      expect(await withStore(async (s) => (await s.users.list()).map(strip), db)).toEqual(
        await withStore(async (s) => (await s.users.list()).map(strip)),
      );
      expect(await apiLogin('dave', 'daves-long-password', db)).toBe(200);
    }
    const exported = JSON.parse(fs.readFileSync(path.join(dir, 'users.json'), 'utf8'));
    expect(exported[1]).toMatchObject({ id: 2, username: 'dave', scope: '/dave', hideDotfiles: true });
    expect(exported[1].password).toMatch(/^\$2[ab]\$10\$/);
    expect(fs.readFileSync(path.join(dir, 'users.yml'), 'utf8')).toContain('hidedotfiles: true');
  });

  it("imports File Browser's users export (JSON, and YAML with lower-cased keys) and old passwords work", async () => {
    const adminHash = await goHash('old-admin-password');
    const aliceHash = await goHash('alices-old-password');
    expect(adminHash).toMatch(/^\$2a\$10\$/);
    const perm = (admin: boolean) => ({
      admin,
      execute: admin,
      create: true,
      rename: true,
      modify: true,
      delete: admin,
      share: true,
      download: true,
    });
    const goJson = [
      {
        id: 1,
        username: 'admin',
        password: adminHash,
        scope: '.',
        locale: 'en',
        lockPassword: false,
        viewMode: 'mosaic',
        singleClick: false,
        redirectAfterCopyMove: true,
        perm: perm(true),
        commands: [],
        sorting: { by: 'name', asc: false },
        rules: [],
        hideDotfiles: false,
        dateFormat: false,
        aceEditorTheme: '',
      },
    ];
    fs.writeFileSync(path.join(dir, 'fb-users.json'), JSON.stringify(goJson, null, 4));
    const goYaml = `- id: 3
  username: alice
  password: ${aliceHash}
  scope: /alice
  locale: de
  lockpassword: true
  viewmode: list
  singleclick: true
  redirectaftercopymove: false
  perm:
    admin: false
    execute: false
    create: true
    rename: true
    modify: false
    delete: false
    share: false
    download: true
  commands:
    - ls
  sorting:
    by: size
    asc: true
  rules:
    - regex: true
      allow: false
      path: ""
      regexp:
        raw: \\.secret$
    - regex: false
      allow: false
      path: /private
      regexp: null
  hidedotfiles: true
  dateformat: true
  aceeditortheme: monokai
`;
    fs.writeFileSync(path.join(dir, 'fb-users.yaml'), goYaml);

    expect((await cli(['users', 'import', 'fb-users.json'])).err).toBe('');
    expect((await cli(['users', 'import', 'fb-users.yaml'])).err).toBe('');
    const [admin, alice] = await withStore(async (s) => [(await s.users.get(1))!, (await s.users.get(3))!]);
    expect(admin).toMatchObject({ username: 'admin', passwordHash: adminHash, scope: '/' });
    expect(admin.perm.admin).toBe(true);
    expect(alice).toMatchObject({
      username: 'alice',
      passwordHash: aliceHash,
      scope: '/alice',
      locale: 'de',
      lockPassword: true,
      viewMode: 'list',
      singleClick: true,
      commands: ['ls'],
      sorting: { by: 'size', asc: true },
      hideDotfiles: true,
      dateFormat: true,
      aceEditorTheme: 'monokai',
    });
    expect(alice.perm).toMatchObject({ admin: false, modify: false, download: true });
    expect(alice.rules).toEqual([
      { regex: true, allow: false, path: '', regexp: { raw: '\\.secret$' } },
      { regex: false, allow: false, path: '/private', regexp: null },
    ]);
    expect(await apiLogin('admin', 'old-admin-password')).toBe(200);
    expect(await apiLogin('alice', 'alices-old-password')).toBe(200);
    expect(await apiLogin('alice', 'wrong-password-here')).toBe(403);
  });

  it('an imported user replacing an id does not inherit its API tokens', async () => {
    await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin']);
    await cli(['users', 'export', 'tokens.json']);
    const token = {
      id: '0123456789abcdef',
      userId: 1,
      name: 'script',
      secretHash: '00'.repeat(32),
      readOnly: false,
      rootPath: '',
      createdAt: Date.now(),
      expiresAt: 0,
      lastUsedAt: 0,
    };
    await withStore(async (s) => await s.apiTokens.create(token));
    expect((await cli(['users', 'import', 'tokens.json', '--overwrite'])).code).toBe(0);
    expect(await withStore(async (s) => await s.apiTokens.listByUser(1))).toEqual([]);
    await withStore(async (s) => await s.apiTokens.create(token));
    expect((await cli(['users', 'import', 'tokens.json', '--replace'])).code).toBe(0);
    expect(await withStore(async (s) => await s.apiTokens.get(token.id))).toBeUndefined();
  });

  it('needs --overwrite for existing ids, refuses username clashes, and --replace keeps a backup', async () => {
    await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin']);
    await cli(['users', 'export', 'before.json']);
    const list = JSON.parse(fs.readFileSync(path.join(dir, 'before.json'), 'utf8'));
    list[0].locale = 'it';
    fs.writeFileSync(path.join(dir, 'changed.json'), JSON.stringify(list));
    await expectError(
      ['users', 'import', 'changed.json'],
      /user id 1 \(admin\) already exists: use --overwrite/,
    );
    expect((await cli(['users', 'import', 'changed.json', '--overwrite'])).out).toContain('(1 replaced)');
    expect(await withStore(async (s) => (await s.users.get(1))!.locale)).toBe('it');

    const clash = [{ ...list[0], id: 0 }];
    fs.writeFileSync(path.join(dir, 'clash.json'), JSON.stringify(clash));
    await expectError(
      ['users', 'import', 'clash.json', '--overwrite'],
      /username "admin" is already taken by user 1/,
    );

    await cli(['users', 'add', 'frank', 'franks-long-password']);
    const newcomer = [{ ...list[0], id: 7, username: 'grace' }];
    fs.writeFileSync(path.join(dir, 'replace.json'), JSON.stringify(newcomer));
    const r = await cli(['users', 'import', 'replace.json', '--replace']);
    expect(r.code).toBe(0);
    expect(await withStore(async (s) => (await s.users.list()).map((u) => [u.id, u.username]))).toEqual([
      [7, 'grace'],
    ]);
    // The backup holds the users as they were before the import (File Browser saved the new list).
    const backup = fs.readdirSync(dir).find((f) => f.startsWith('users-backup-'))!;
    const saved = JSON.parse(fs.readFileSync(path.join(dir, backup), 'utf8'));
    expect(saved.map((u: { username: string }) => u.username)).toEqual(['admin', 'frank']);
  });

  it('checks the whole file before changing anything', async () => {
    await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin']);
    const good = { username: 'heidi', password: await goHash('heidis-password') };
    const files: [string, unknown, RegExp][] = [
      ['plain.json', [{ username: 'ivan', password: 'not-a-hash' }], /"password" must be a bcrypt hash/],
      ['twice.json', [good, { ...good, username: 'HEIDI' }], /lists the username "HEIDI" twice/],
      [
        'regex.json',
        [{ ...good, rules: [{ regex: true, regexp: { raw: '[' } }] }],
        /invalid regular expression/,
      ],
      ['object.json', { users: [] }, /expected a list of users/],
      ['noname.json', [{ password: good.password }], /user 1 of the file has no username/],
    ];
    for (const [file, content, message] of files) {
      fs.writeFileSync(path.join(dir, file), JSON.stringify(content));
      await expectError(['users', 'import', file], message);
    }
    // A clash on the second user rolls back the first.
    fs.writeFileSync(
      path.join(dir, 'partial.json'),
      JSON.stringify([good, { ...good, username: 'admin', id: 0 }]),
    );
    await expectError(['users', 'import', 'partial.json'], /already taken/);
    expect(await withStore(async (s) => await s.users.getByUsername('heidi'))).toBeUndefined();
  });
});

describe('rules and cmds', () => {
  it('adds, lists and removes global and per-user rules, validating regexes and indexes', async () => {
    await cli(['users', 'add', 'admin', 'admin-password-123', '--perm.admin']);
    expect((await cli(['rules', 'add', '/private'])).out).toBe('(0) deny path /private\n');
    expect((await cli(['rules', 'add', '-a', '-r', '^/public'])).code).toBe(0);
    expect((await cli(['rules', 'add', '/c'])).code).toBe(0);
    expect((await cli(['rules', 'ls'])).out).toBe(
      '(0) deny path /private\n(1) allow regex ^/public\n(2) deny path /c\n',
    );
    expect((await cli(['rules', 'add', '-u', 'admin', '/secret'])).code).toBe(0);
    expect((await cli(['rules', 'ls', '-i', '1'])).out).toBe('(0) deny path /secret\n');

    await expectError(['rules', 'add', '-r', '(unclosed'], /the rule 1 has an invalid regular expression/);
    await expectError(['rules', 'rm', '3'], /index 3 is out of range: the rules are numbered 0 to 2/);
    await expectError(['rules', 'rm', 'x'], /"x" is not an index/);
    await expectError(['rules', 'rm', '2', '1'], /end index 1 is before the start index 2/);
    await expectError(['rules', 'rm'], /give the index/);
    await expectError(['rules', 'ls', '-u', 'nobody'], /user "nobody" does not exist/);
    await expectError(['rules', 'rm', '-i', '1', '1'], /index 1 is out of range/);

    expect((await cli(['rules', 'rm', '0', '1'])).out).toBe('(0) deny path /c\n');
    // File Browser's scripts pass --index; it is accepted, and not required.
    expect((await cli(['rules', 'rm', '--index', '0'])).out).toBe('No rules.\n');
    expect(await withStore(async (s) => (await s.users.get(1))!.rules)).toHaveLength(1);
  });

  it('adds, lists and removes event commands', async () => {
    expect((await cli(['cmds', 'add', 'before_save', 'echo', '-n', 'saving'])).code).toBe(0);
    await cli(['cmds', 'add', 'before_save', 'logger saved']);
    await cli(['cmds', 'add', 'after_upload', 'scan.sh']);
    expect((await cli(['cmds', 'ls', '-e', 'before_save'])).out).toBe(
      'before_save:\n  (0) echo -n saving\n  (1) logger saved\n',
    );
    expect((await cli(['cmds', 'ls'])).out).toContain('after_upload:\n  (0) scan.sh\n');
    await expectError(['cmds', 'add', 'on_save', 'x'], /unknown event "on_save"/);
    await expectError(['cmds', 'rm', 'before_save', '5'], /index 5 is out of range/);
    await expectError(['cmds', 'rm', 'before_copy', '0'], /there are no commands of before_copy to remove/);
    expect((await cli(['cmds', 'rm', 'before_save', '0'])).out).toBe('before_save:\n  (0) logger saved\n');
    expect(await withStore((s) => s.settings.get().commands.before_save)).toEqual(['logger saved']);
  });

  it('hashes passwords and prints the version', async () => {
    const h = await cli(['hash', 'some password']);
    expect(h.out).toMatch(/^\$2[ab]\$10\$.{53}\n$/);
    expect((await cli(['version'])).out).toMatch(/^File Browser v\d+\.\d+\.\d+[^/\s]*\/\S+\n$/);
  });
});
