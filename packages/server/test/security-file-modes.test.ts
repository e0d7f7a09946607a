import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIO } from '../src/cli/index.js';
import { serve } from '../src/cli/serve.js';
import { startTestApp, type TestApp } from './helpers.js';

/*
 * Class: the server's own files readable by every account on the host (File Browser's
 * GHSA-jj2r-455p-5gvf: the database took the umask, typically 0644). The database holds password
 * hashes, sessions and the key that signs tokens.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  // A write makes SQLite create its -wal and -shm files.
  await t.createUser({ username: 'dora' });
});
afterAll(() => t.close());

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('the database', () => {
  it('and its side files are never readable by other accounts, in a folder only the server enters', () => {
    for (const file of [t.dbFile, `${t.dbFile}-wal`, `${t.dbFile}-shm`]) {
      expect(fs.existsSync(file), file).toBe(true);
      expect(modeOf(file) & 0o007, `${path.basename(file)} is ${modeOf(file).toString(8)}`).toBe(0);
    }
    expect(modeOf(path.dirname(t.dbFile))).toBe(0o700);
  });

  it('is created 0600, and its -wal and -shm with it', () => {
    for (const file of [t.dbFile, `${t.dbFile}-wal`, `${t.dbFile}-shm`])
      expect(modeOf(file), file).toBe(0o600);
  });
});

describe("the operator's mode on the database", () => {
  /** The server and commands, run in this process on a temporary folder. */
  async function withFolder(fn: (dir: string, cli: (argv: string[]) => Promise<number>) => Promise<void>) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-modes-'));
    fs.mkdirSync(path.join(dir, 'files'));
    const io: CliIO = {
      out: () => {},
      err: () => {},
      env: {},
      places: { cwd: dir, home: dir, systemDir: path.join(dir, 'etc') },
      ownsProcess: false,
    };
    try {
      await fn(dir, (argv) => runCli(argv, io));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  /** A start and stop of the server, and commands that read and write. */
  async function startAndCommands(dir: string, cli: (argv: string[]) => Promise<number>, db: string) {
    const places = { cwd: dir, home: dir, systemDir: path.join(dir, 'etc') };
    const io: CliIO = { out: () => {}, err: () => {}, env: {}, places, ownsProcess: false };
    const running = await serve(
      { database: db, root: path.join(dir, 'files'), socket: path.join(dir, 's'), log: '' },
      io,
    );
    await running.close();
    expect(await cli(['users', 'add', `u${Date.now()}`, 'a-long-password-1', '-d', db])).toBe(0);
    expect(await cli(['users', 'ls', '-d', db])).toBe(0);
    expect(await cli(['config', 'set', '--branding.name', 'x', '-d', db])).toBe(0);
  }

  it('is kept at 0600 and at 0640 by starts and commands: never loosened', async () => {
    await withFolder(async (dir, cli) => {
      const db = path.join(dir, 'fb.db');
      expect(await cli(['config', 'init', '-r', 'files', '-d', db])).toBe(0);
      expect(modeOf(db)).toBe(0o600);
      await startAndCommands(dir, cli, db);
      expect(modeOf(db)).toBe(0o600);
      // A backup group the operator chose stays.
      fs.chmodSync(db, 0o640);
      await startAndCommands(dir, cli, db);
      expect(modeOf(db)).toBe(0o640);
    });
  });

  it('loses access for every account when it had it (File Browser left it 0644), side files too', async () => {
    await withFolder(async (dir, cli) => {
      const db = path.join(dir, 'fb.db');
      expect(await cli(['config', 'init', '-r', 'files', '-d', db])).toBe(0);
      fs.chmodSync(db, 0o644);
      // Another connection keeps -wal and -shm, made with the database's old mode.
      const other = new Database(db);
      other.pragma('journal_mode = WAL');
      other.prepare("UPDATE config SET value = value WHERE key = 'settings'").run();
      expect(modeOf(`${db}-wal`)).toBe(0o644);
      try {
        expect(await cli(['users', 'ls', '-d', db])).toBe(0);
        for (const file of [db, `${db}-wal`, `${db}-shm`]) expect(modeOf(file), file).toBe(0o640);
      } finally {
        other.close();
      }
    });
  });
});
