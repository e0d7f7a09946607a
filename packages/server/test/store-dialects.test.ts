import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, SCHEMA_VERSION } from '../src/store/db.js';
import { isNewStore, openStore } from '../src/store/index.js';
import { dropPostgresSchema, NewerPostgresSchemaError, openPostgres } from '../src/store/postgres.js';
import { TABLES } from '../src/store/schema.js';
import { SessionsRepo } from '../src/store/sessions.js';
import { sqliteSql, type Sql } from '../src/store/sql.js';
import { ALL_PERMISSIONS, UsersRepo, type NewUser } from '../src/store/users.js';
import { startCluster, type Cluster } from './postgres/cluster.js';

/**
 * The repositories written once for both databases, run on both: a real SQLite file and a real
 * PostgreSQL cluster made for this file.
 */

let cluster: Cluster;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-dialects-'));
beforeAll(async () => {
  cluster = await startCluster();
});
afterAll(async () => {
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

let files = 0;
const dialects: Array<[string, () => Promise<Sql>]> = [
  ['sqlite', async () => sqliteSql(openDatabase(path.join(tmp, `db-${++files}.db`)))],
  ['postgres', async () => openPostgres(await cluster.createDatabase(), SCHEMA_VERSION)],
];

const newUser = (username: string, admin = false): NewUser => ({
  username,
  passwordHash: 'hash',
  scope: '/',
  locale: 'en',
  lockPassword: false,
  viewMode: 'list',
  singleClick: false,
  redirectAfterCopyMove: false,
  perm: { ...ALL_PERMISSIONS, admin },
  commands: [],
  sorting: { by: 'name', asc: true },
  rules: [],
  hideDotfiles: false,
  dateFormat: false,
  aceEditorTheme: '',
  uploadsLimit: 5,
  webdav: false,
});

describe.each(dialects)('on %s', (_name, open) => {
  let db: Sql;
  beforeAll(async () => {
    db = await open();
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it('keeps users: ids, names found by their key, 409 for a taken name, kept ids on import', async () => {
    const users = new UsersRepo(db);
    const admin = await users.create(newUser('Admin', true));
    const bob = await users.create(newUser('bob'));
    expect(bob.id).toBeGreaterThan(admin.id);
    expect((await users.getByUsername('ＡＤＭＩＮ'))?.id).toBe(admin.id);
    await expect(users.create(newUser('BOB'))).rejects.toMatchObject({ status: 409 });
    const kept = await users.create(newUser('carol'), 40);
    expect(kept.id).toBe(40);
    // The next id comes after the kept one, in both databases.
    expect((await users.create(newUser('dave'))).id).toBeGreaterThan(40);
    expect(await users.count()).toBe(4);
    expect(await users.countAdmins()).toBe(1);
    const renamed = await users.update({ ...bob, username: 'robert', quota: 5 });
    expect(renamed).toMatchObject({ username: 'robert', quota: 5 });
    await expect(users.update({ ...renamed, username: 'carol' })).rejects.toMatchObject({ status: 409 });
    expect(await users.delete(bob.id)).toBe(true);
    expect(await users.delete(bob.id)).toBe(false);
    expect((await users.list()).map((u) => u.username)).toEqual(['Admin', 'carol', 'dave']);
  });

  it('keeps sessions by the hash of their secret, ends them, and counts the live ones', async () => {
    const users = new UsersRepo(db);
    const sessions = new SessionsRepo(db);
    const u = await users.create(newUser('erin'));
    const a = await sessions.create(u.id, 3600);
    const b = await sessions.create(u.id, 3600);
    const expired = await sessions.create(u.id, -1);
    expect(await sessions.get(a.id)).toMatchObject({ userId: u.id, expiresAt: a.expiresAt });
    expect(typeof (await sessions.get(a.id))!.expiresAt).toBe('number');
    expect(await sessions.get(expired.id)).toBeUndefined();
    const stored = await sql<{ id_hash: string }>`SELECT id_hash FROM sessions`.execute(db);
    expect(stored.rows.map((r) => r.id_hash)).not.toContain(a.id);
    const live = await sessions.countLive();
    await sessions.revokeUser(u.id, a.id);
    expect(await sessions.get(b.id)).toBeUndefined();
    expect(await sessions.get(a.id)).toBeDefined();
    expect(await sessions.countLive()).toBe(live - 1);
    await sessions.purgeExpired();
    // A deleted user's sessions go with it.
    await users.delete(u.id);
    expect(await sessions.get(a.id)).toBeUndefined();
  });
});

describe('PostgreSQL schema', () => {
  it('names where it could not connect and why, never the password, and a dropped schema starts anew', async () => {
    const url = await cluster.createDatabase();
    const nowhere = url
      .replace(/^postgres:\/\/postgres@/, 'postgres://postgres:s3cret-pw@')
      .replace(/\/fb_\w+/, '/no_such_db');
    for (const attempt of [() => openStore(nowhere), () => isNewStore(nowhere)]) {
      const err = await attempt().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toMatch(
        /^cannot connect to the database postgres:\/\/postgres@.*\/no_such_db: .*no_such_db/,
      );
      expect(err?.message).not.toContain('s3cret-pw');
    }
    const made = await openStore(url);
    await made.close();
    expect(await isNewStore(url)).toBe(false);
    await dropPostgresSchema(url);
    expect(await isNewStore(url)).toBe(true);
  });

  it('is refused when a newer File Browser wrote it, before anything is written', async () => {
    const url = await cluster.createDatabase();
    const first = await openPostgres(url, SCHEMA_VERSION);
    await sql`UPDATE schema_version SET version = ${SCHEMA_VERSION + 1}`.execute(first);
    await first.destroy();
    await expect(openPostgres(url, SCHEMA_VERSION)).rejects.toBeInstanceOf(NewerPostgresSchemaError);
  });

  it('has the tables and columns SQLite has', async () => {
    const pg = await openPostgres(await cluster.createDatabase(), SCHEMA_VERSION);
    const lite = openDatabase(path.join(tmp, 'columns.db'));
    try {
      const pgColumns = await sql<{ table_name: string; column_name: string }>`
        SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name <> 'schema_version'`.execute(pg);
      const fromPg = pgColumns.rows.map((r) => `${r.table_name}.${r.column_name}`).sort();
      const tables = lite
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .all() as Array<{ name: string }>;
      const fromSqlite = tables
        .flatMap((t) =>
          (lite.prepare(`PRAGMA table_info(${t.name})`).all() as Array<{ name: string }>).map(
            (c) => `${t.name}.${c.name}`,
          ),
        )
        .sort();
      expect(fromPg).toEqual(fromSqlite);
      // Every table is one a copy takes (store/copy.ts) and a failed first start drops.
      expect([...TABLES].sort()).toEqual(tables.map((t) => t.name).sort());
    } finally {
      lite.close();
      await pg.destroy();
    }
  });
});
