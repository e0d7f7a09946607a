import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliIO } from '../src/cli/index.js';
import { serve, type RunningServer } from '../src/cli/serve.js';
import type { ConfigPlaces } from '../src/config/sources.js';
import { SCHEMA_VERSION } from '../src/store/db.js';
import { openStore } from '../src/store/index.js';
import { startTestApp, type TestApp } from './helpers.js';

/*
 * `filebrowser backup` and `restore`, run in this process as the command line runs them, against
 * a real app or a real server (`serve`, the code `filebrowser` runs) on a real SQLite file.
 */

let dir: string;
let places: ConfigPlaces;
const servers: RunningServer[] = [];
const apps: TestApp[] = [];
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-cli-backup-'));
  fs.mkdirSync(path.join(dir, 'home'));
  fs.mkdirSync(path.join(dir, 'files'));
  places = { cwd: dir, home: path.join(dir, 'home'), systemDir: path.join(dir, 'etc') };
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const a of apps.splice(0)) await a.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function io(): CliIO & { output: () => { out: string; err: string } } {
  let out = '';
  let err = '';
  return {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
    places,
    ownsProcess: false,
    output: () => ({ out, err }),
  };
}

async function cli(argv: string[]) {
  const cliIO = io();
  const code = await runCli(argv, cliIO);
  return { code, ...cliIO.output() };
}

async function expectError(argv: string[], message: RegExp) {
  const r = await cli(argv);
  expect(r.code, r.out).toBe(1);
  expect(r.err.trimEnd()).toMatch(message);
  expect(r.err.trim().split('\n')).toHaveLength(1);
}

const at = (...parts: string[]) => path.join(dir, ...parts);
const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The usernames in a database file, read with a connection of its own. */
async function usernames(file: string): Promise<string[]> {
  const store = await openStore(file);
  try {
    return (await store.users.list()).map((u) => u.username);
  } finally {
    await store.close();
  }
}

/** Starts the server the way `filebrowser -d DB -r files --socket S` does. */
async function startServer(database: string): Promise<RunningServer> {
  const running = await serve({ database, root: at('files'), socket: at('fb.sock'), log: '' }, io());
  servers.push(running);
  return running;
}

async function stopServer(running: RunningServer): Promise<void> {
  servers.splice(servers.indexOf(running), 1);
  await running.close();
}

/** POST /api/login over the server's unix socket. */
function login(username: string, password: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath: at('fb.sock'),
        path: '/api/login',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ username, password }));
  });
}

describe('filebrowser backup', () => {
  it('copies users added a moment before, still in the -wal file, while the app keeps writing', async () => {
    const t = await startTestApp();
    apps.push(t);
    for (let i = 0; i < 10; i++) await t.createUser({ username: `before${i}` });
    // What a plain file copy misses: the new accounts are only in the write-ahead log yet.
    expect(fs.statSync(`${t.dbFile}-wal`).size).toBeGreaterThan(0);

    let writing = true;
    const written: string[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i++) written.push((await t.createUser({ username: `during${i}` })).username);
    })();
    const r = await cli(['backup', at('backups', 'fb.db'), '-d', t.dbFile]);
    writing = false;
    await writer;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(`Backed up ${t.dbFile} (schema ${SCHEMA_VERSION}) to ${at('backups', 'fb.db')}\n`);

    const copy = at('backups', 'fb.db');
    // One private file, nothing beside it, whole.
    expect(fs.readdirSync(at('backups'))).toEqual(['fb.db']);
    expect(modeOf(copy)).toBe(0o600);
    const raw = new Database(copy, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    raw.close();
    const names = await usernames(copy);
    expect(names.slice(0, 11)).toEqual(['admin', ...Array.from({ length: 10 }, (_, i) => `before${i}`)]);
    // One moment of the database: a prefix of the writes made during the copy, never a mix.
    expect(names.slice(11)).toEqual(written.slice(0, names.length - 11));
  });

  it('replaces an earlier backup with a private one, and refuses the database itself or a folder', async () => {
    const t = await startTestApp();
    apps.push(t);
    fs.writeFileSync(at('old.db'), 'an earlier backup', { mode: 0o644 });
    expect((await cli(['backup', 'old.db', '-d', t.dbFile])).code).toBe(0);
    expect(modeOf(at('old.db'))).toBe(0o600);
    expect(await usernames(at('old.db'))).toEqual(['admin']);

    await expectError(['backup', t.dbFile, '-d', t.dbFile], /^error: .* is the database itself$/);
    await expectError(['backup', dir, '-d', t.dbFile], /^error: .* is a folder: name the backup file$/);
    await expectError(
      ['backup', 'x.db', '-d', 'missing.db'],
      /^error: database .*missing\.db does not exist$/,
    );
    expect(fs.existsSync(at('x.db'))).toBe(false);
    expect(fs.existsSync(at('missing.db'))).toBe(false);
  });
});

describe('filebrowser restore', () => {
  it('is refused while a server runs, and puts the backup back once it is stopped', async () => {
    const database = at('db', 'fb.db');
    const first = await startServer(database);
    await cli(['users', 'add', 'kept', 'kept-password-123', '-d', database]);
    expect((await cli(['backup', 'fb-backup.db', '-d', database])).code).toBe(0);
    await cli(['users', 'add', 'later', 'later-password-123', '-d', database]);

    const before = await usernames(database);
    await expectError(
      ['restore', 'fb-backup.db', '-d', database],
      /^error: a File Browser server is running on .*fb\.db: stop it before restoring$/,
    );
    expect(await usernames(database)).toEqual(before);
    expect(fs.readdirSync(at('db')).filter((n) => /restoring|before-restore/.test(n))).toEqual([]);
    // Nor can a second server take the database while the first holds it.
    await expect(startServer(database)).rejects.toThrow(/in use by another File Browser server/);
    expect(await login('later', 'later-password-123')).toBe(200);

    await stopServer(first);
    const r = await cli(['restore', 'fb-backup.db', '-d', database]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Restored ${at('fb-backup.db')} (schema ${SCHEMA_VERSION}) into ${database}\n`);
    expect(r.out).toContain(`The database it replaced is kept as ${database}.before-restore`);
    expect(await usernames(database)).toEqual(['admin', 'kept']);
    expect(await usernames(`${database}.before-restore`)).toEqual(['admin', 'kept', 'later']);
    expect(modeOf(database)).toBe(0o600);

    // The restored database serves: its accounts sign in, the later one is gone.
    await startServer(database);
    expect(await login('kept', 'kept-password-123')).toBe(200);
    expect(await login('later', 'later-password-123')).toBe(403);
  });

  it('creates the database on a new machine, private, and upgrades an older backup when opened', async () => {
    const t = await startTestApp();
    apps.push(t);
    await t.createUser({ username: 'moved' });
    expect((await cli(['backup', 'fb-backup.db', '-d', t.dbFile])).code).toBe(0);
    // A backup made by an older version: the schema one step behind.
    const old = new Database(at('fb-backup.db'));
    old.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    old.close();

    const database = at('new-machine', 'data', 'fb.db');
    const r = await cli(['restore', 'fb-backup.db', '-d', database]);
    expect(r.err).toBe('');
    expect(r.out).toContain(`(schema ${SCHEMA_VERSION - 1})`);
    expect(r.out).toContain(
      `It is upgraded to schema ${SCHEMA_VERSION} when the server or a command next opens it.`,
    );
    expect(r.out).not.toContain('replaced');
    expect(modeOf(database)).toBe(0o600);
    expect(modeOf(path.dirname(database))).toBe(0o700);
    expect((await cli(['users', 'ls', '-d', database])).out).toMatch(/\n2\s+moved/);
    const upgraded = new Database(database, { readonly: true });
    expect(upgraded.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    upgraded.close();
  });

  it('refuses what is not a File Browser database, or comes from a newer version, and changes nothing', async () => {
    const database = at('fb.db');
    expect((await cli(['config', 'init', '-r', 'files', '-d', database])).code).toBe(0);
    expect((await cli(['users', 'add', 'stays', 'stays-password-123', '-d', database])).code).toBe(0);
    const sum = digest(database);

    fs.writeFileSync(at('notes.txt'), 'not a database at all\n'.repeat(100));
    const other = new Database(at('other.db'));
    other.exec('CREATE TABLE things (x)');
    other.pragma('user_version = 3');
    other.close();
    expect((await cli(['backup', 'newer.db', '-d', database])).code).toBe(0);
    const newer = new Database(at('newer.db'));
    newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    newer.close();

    await expectError(
      ['restore', 'notes.txt', '-d', database],
      /^error: .*notes\.txt is not a File Browser database \(not an SQLite file\)$/,
    );
    await expectError(
      ['restore', 'other.db', '-d', database],
      /^error: .*other\.db is not a File Browser database$/,
    );
    await expectError(
      ['restore', 'newer.db', '-d', database],
      new RegExp(
        `^error: .*newer\\.db was written by a newer File Browser \\(schema ${SCHEMA_VERSION + 1}, this version knows ${SCHEMA_VERSION}\\): upgrade to restore it$`,
      ),
    );
    await expectError(['restore', 'missing.db', '-d', database], /^error: .*missing\.db does not exist$/);
    await expectError(['restore', 'fb.db', '-d', database], /^error: .*fb\.db is the database itself$/);

    expect(digest(database)).toBe(sum);
    expect(
      fs.readdirSync(dir).filter((n) => n.startsWith('fb.db') && n !== 'fb.db' && n !== 'fb.db.lock'),
    ).toEqual([]);
    expect(await usernames(database)).toEqual(['stays']);
  });
});

describe('a database written by a newer version', () => {
  it('is refused at start and by every command, with a clear message, and left as it is', async () => {
    const database = at('fb.db');
    expect((await cli(['config', 'init', '-r', 'files', '-d', database])).code).toBe(0);
    const raw = new Database(database);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 2}`);
    raw.close();
    const sum = digest(database);
    const message = new RegExp(
      `^error: the database ${database.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} was written by a newer File Browser \\(schema ${SCHEMA_VERSION + 2}, this version knows ${SCHEMA_VERSION}\\): upgrade, or restore a backup$`,
    );

    await expect(startServer(database)).rejects.toThrow(/was written by a newer File Browser/);
    for (const argv of [
      ['-d', database, '-r', 'files', '--socket', at('fb.sock'), '--log', ''],
      ['users', 'ls', '-d', database],
      ['users', 'add', 'x', 'x-password-1234', '-d', database],
      ['config', 'cat', '-d', database],
      ['config', 'set', '--port', '9000', '-d', database],
      ['rules', 'ls', '-d', database],
      ['cmds', 'ls', '-d', database],
    ]) {
      await expectError(argv, message);
    }
    expect(digest(database)).toBe(sum);
    // A copy is bytes, not read as a schema: the operator can still save it before downgrading.
    expect((await cli(['backup', 'saved.db', '-d', database])).code).toBe(0);
  });
});
