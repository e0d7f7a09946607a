import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIO } from '../src/cli/index.js';
import { openStore, type Store } from '../src/store/index.js';
import { TABLES } from '../src/store/schema.js';
import { startCluster, type Cluster } from './postgres/cluster.js';
import { startTestApp } from './helpers.js';

/**
 * `filebrowser db copy`: a store with something in every table moved to PostgreSQL and back, the
 * server on the copy seeing what it saw; a non-empty target refused and left as it was.
 */

let cluster: Cluster;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-db-copy-'));
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io = {
    out: (s: string) => void (out += s),
    err: (s: string) => void (err += s),
    env: {},
    places: { cwd: tmp, home: tmp, etc: path.join(tmp, 'etc') },
    ownsProcess: false,
  } as unknown as CliIO;
  const code = await runCli(args, io);
  return { code, out, err };
}

async function rows(store: Store): Promise<Record<string, unknown[]>> {
  const all: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const r = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)} ORDER BY 1`.execute(
      store.sql,
    );
    all[table] = r.rows;
  }
  return all;
}

describe('db copy', () => {
  it('moves every row of a used SQLite store to PostgreSQL and back, ids and all', async () => {
    // A store that has been used: a user, a session, a share with a password grant, an API
    // token, a pending upload, a staging record, a dead property and a lock, a trashed file, audit
    // records, a move in progress and a counted scope.
    const t = await startTestApp();
    const file = path.join(tmp, 'source.db');
    try {
      const bob = await t.createUser({ username: 'bob' });
      const store = t.ctx.store;
      await store.shares.create({
        hash: 'h1',
        path: '/a',
        rootId: 'default',
        rootPath: '/a',
        itemId: '2049:131:1764400000123456789',
        userId: bob.id,
        expire: 0,
        passwordHash: 'x',
      });
      await store.shareGrants.add('h1', 'token-1', Date.now() + 60_000);
      await store.apiTokens.create({
        id: 'tok',
        userId: bob.id,
        name: 'n',
        secretHash: 'ab',
        readOnly: true,
        rootPath: '',
        createdAt: 1,
        expiresAt: 0,
        lastUsedAt: 0,
      });
      await store.uploads.put({
        id: 'u1',
        userId: bob.id,
        path: '/big',
        length: 10,
        override: false,
        staging: '/tmp/x',
      });
      await store.staging.add('/tmp', 'stage');
      await store.davProps.patch(
        'default',
        '/a',
        [{ ns: 'urn:x', name: 'p', xml: '<p xmlns="urn:x">é</p>' }],
        bob.id,
      );
      await store.davLocks.create({
        token: 'lk',
        rootId: 'default',
        path: '/a',
        userId: bob.id,
        scope: 'exclusive',
        depth: '0',
        owner: '',
        timeout: 60,
        expiresAt: Date.now() + 60_000,
        createdAt: Date.now(),
      });
      await store.trash.add({
        id: 'tr',
        userId: bob.id,
        rootId: 'default',
        rootPath: '/gone',
        path: '/gone',
        size: 5,
        isDir: false,
        deletedBy: 'bob',
        deletedAt: 2,
        location: `${bob.id}/tr`,
      });
      await store.moves.add({
        sourceFolder: '/s',
        sourceName: 'a',
        sourceId: '1:2:3',
        hiddenName: 'h',
        destFolder: '/d',
        stagingName: 's',
        destName: 'a',
      });
      await store.scopeUsage.set({ rootId: 'default', scope: '/users/bob', bytes: 42, countedAt: 3 });
      // Counted in the database where several instances share the throttle (PostgreSQL).
      await store.attempts.take('login:address', '203.0.113.1', 60_000, Date.now());
      // Held back by a pending resumable upload, which any instance may go on with.
      await store.reservations.add('upload:pending', ['/users/bob'], 7);
      // A resumable upload being created, as every instance counts it.
      await store.uploadCreations.add('creating-1', bob.id, 12);
      // A job as every instance sees it.
      await store.jobs.add(bob.id, undefined, {
        id: 'job-1',
        action: 'copy',
        state: 'running',
        items: ['/a'],
        destination: '/b/',
        bytesDone: 0,
        bytesTotal: 0,
        itemsDone: 0,
        itemsTotal: 0,
        startedAt: 5,
      });
      // A session renewed into another, which work started in the first follows.
      const renewedFrom = await store.sessions.create(bob.id, 60);
      const renewedTo = await store.sessions.create(bob.id, 60);
      await store.sessions.renewed(renewedFrom.id, renewedTo.id, 60_000);
      await t.ctx.audit.flush();
      await sql`VACUUM INTO ${file}`.execute(store.sql);
    } finally {
      await t.close();
    }
    const source = await openStore(file);
    const before = await rows(source);
    await source.close();
    for (const table of TABLES) expect(before[table]!.length, table).toBeGreaterThan(0);

    const url = await cluster.createDatabase();
    const there = await cli(['db', 'copy', '--from', file, '--to', url]);
    expect(there.err).toBe('');
    expect(there.code).toBe(0);
    expect(there.out).toMatch(
      /^Copied \d+ rows from .* to postgres:\/\/postgres@\S+\/fb_\w+ \(.*\); the counts match\.\n$/,
    );
    const pg = await openStore(url);
    try {
      expect(await rows(pg)).toEqual(before);
      // The server on the copy: the same users; ids handed out after the copied ones.
      expect((await pg.users.getByUsername('bob'))?.username).toBe('bob');
      const next = await pg.users.create({ ...(await pg.users.getByUsername('bob'))!, username: 'carol' });
      expect(next.id).toBeGreaterThan(Math.max(...(before.users as Array<{ id: number }>).map((u) => u.id)));
      await pg.users.delete(next.id);
    } finally {
      await pg.close();
    }

    const back = path.join(tmp, 'back.db');
    const home = await cli(['db', 'copy', '--from', url, '--to', back]);
    expect(home.code, home.err).toBe(0);
    const again = await openStore(back);
    try {
      expect(await rows(again)).toEqual(before);
    } finally {
      await again.close();
    }
  });

  it('refuses a target that holds data, and a source that does not exist, changing nothing', async () => {
    const url = await cluster.createDatabase();
    const first = await openStore(url);
    await first.close();
    const file = path.join(tmp, 'other.db');
    const made = await openStore(file);
    await made.close();
    const refused = await cli(['db', 'copy', '--from', file, '--to', url]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      /^error: database postgres:\/\/postgres@\S+\/fb_\w+ already holds File Browser's data: copy into a new database\n$/,
    );
    const missing = await cli([
      'db',
      'copy',
      '--from',
      path.join(tmp, 'none.db'),
      '--to',
      path.join(tmp, 'new.db'),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('does not exist or holds nothing');
    expect(fs.existsSync(path.join(tmp, 'new.db'))).toBe(false);
    expect(fs.existsSync(path.join(tmp, 'none.db'))).toBe(false);
  });
});
