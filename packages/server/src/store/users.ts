import type { Permissions, Rule, Sorting, User } from '@filebrowser/contract';
import { conflict } from '../errors.js';
import { usernameKey } from '../auth/usernames.js';
import { sql } from 'kysely';
import { afterExplicitId, isUniqueViolation, type Sql } from './sql.js';

/** A user as the server keeps it: the wire User with the password hash instead of a password. */
export interface StoredUser extends Omit<User, 'password' | 'uploadsLimit' | 'quota'> {
  passwordHash: string;
  uploadsLimit: number;
  /** Bytes the user's scope may hold (0: no quota); see files/quota.ts. */
  quota: number;
  /** Unix milliseconds of the last change made through the API or CLI. */
  updatedAt: number;
}

/** A user to create; an account made without a quota has none (imports, older callers). */
export type NewUser = Omit<StoredUser, 'id' | 'updatedAt' | 'quota'> & { quota?: number };

type Profile = Omit<StoredUser, 'id' | 'username' | 'passwordHash' | 'updatedAt'>;

interface Row {
  id: number;
  username: string;
  password_hash: string;
  profile: string;
  updated_at: number;
}

export const ALL_PERMISSIONS: Permissions = {
  admin: true,
  execute: true,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};

export function normaliseSorting(s: Partial<Sorting> | undefined): Sorting {
  return { by: s?.by || 'name', asc: s?.asc ?? false };
}

function normaliseRules(rules: Rule[] | null | undefined): Rule[] {
  return (rules ?? []).map((r) => ({
    regex: !!r.regex,
    allow: !!r.allow,
    path: r.path ?? '',
    regexp: r.regexp ? { raw: r.regexp.raw ?? '' } : null,
  }));
}

function toProfile(u: NewUser | StoredUser): Profile {
  return {
    scope: u.scope,
    locale: u.locale,
    lockPassword: u.lockPassword,
    viewMode: u.viewMode || 'list',
    singleClick: u.singleClick,
    redirectAfterCopyMove: u.redirectAfterCopyMove,
    perm: { ...u.perm },
    commands: u.commands ?? [],
    sorting: normaliseSorting(u.sorting),
    rules: normaliseRules(u.rules),
    hideDotfiles: u.hideDotfiles,
    dateFormat: u.dateFormat,
    aceEditorTheme: u.aceEditorTheme ?? '',
    uploadsLimit: u.uploadsLimit,
    webdav: u.webdav ?? false,
    quota: u.quota ?? 0,
  };
}

function fromRow(row: Row): StoredUser {
  const p = JSON.parse(row.profile) as Partial<Profile>;
  return {
    id: row.id,
    username: row.username,
    passwordHash: row.password_hash,
    updatedAt: row.updated_at,
    scope: p.scope ?? '/',
    locale: p.locale ?? 'en',
    lockPassword: p.lockPassword ?? false,
    viewMode: p.viewMode || 'list',
    singleClick: p.singleClick ?? false,
    redirectAfterCopyMove: p.redirectAfterCopyMove ?? false,
    perm: { ...ALL_PERMISSIONS, admin: false, ...p.perm },
    commands: p.commands ?? [],
    sorting: normaliseSorting(p.sorting),
    rules: normaliseRules(p.rules),
    hideDotfiles: p.hideDotfiles ?? false,
    dateFormat: p.dateFormat ?? false,
    aceEditorTheme: p.aceEditorTheme ?? '',
    uploadsLimit: p.uploadsLimit ?? 5,
    webdav: p.webdav ?? false,
    quota: p.quota ?? 0,
  };
}

/** The only module that reads or writes the users table. */
export class UsersRepo {
  constructor(private readonly sql: Sql) {}

  async list(): Promise<StoredUser[]> {
    return (await this.sql.selectFrom('users').selectAll().orderBy('id').execute()).map(fromRow);
  }

  async count(): Promise<number> {
    const row = await this.sql
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async get(id: number): Promise<StoredUser | undefined> {
    const row = await this.sql.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  /**
   * The user of the live session stored under `sessionKey` (of user `userId` when given), in one
   * query: a session is checked on every request, and on every step of work that outlives one.
   */
  async getBySession(sessionKey: string, userId?: number): Promise<StoredUser | undefined> {
    let query = this.sql
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('users')
      .where('sessions.id_hash', '=', sessionKey)
      .where('sessions.expires_at', '>', Date.now());
    if (userId !== undefined) query = query.where('sessions.user_id', '=', userId);
    const row = await query.executeTakeFirst();
    return row && fromRow(row);
  }

  /**
   * The account a typed name means: the one with the same key (NFKC, case folded). A name spelt
   * exactly as stored wins, so that accounts whose keys collided when the key was widened to NFKC
   * (see the schema migration) can still sign in by their own spelling.
   */
  async getByUsername(username: string): Promise<StoredUser | undefined> {
    const exact = username.normalize('NFC');
    const row = await this.sql
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.or([eb('username', '=', exact), eb('username_key', '=', usernameKey(username))]))
      .orderBy(sql`username = ${exact}`, 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && fromRow(row);
  }

  /** Inserts a user; `id` may be given to keep ids when importing. Duplicate names or ids answer 409. */
  async create(user: NewUser, id?: number): Promise<StoredUser> {
    try {
      const row = await this.sql
        .insertInto('users')
        .values({
          ...(id === undefined ? {} : { id }),
          username: user.username,
          username_key: usernameKey(user.username),
          password_hash: user.passwordHash,
          profile: JSON.stringify(toProfile(user)),
          updated_at: Date.now(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (id !== undefined) await afterExplicitId(this.sql, 'users');
      return fromRow(row);
    } catch (err) {
      throw translateUnique(err);
    }
  }

  /** Replaces a stored user by id. Duplicate names answer 409. */
  async update(user: StoredUser): Promise<StoredUser> {
    try {
      const row = await this.sql
        .updateTable('users')
        .set({
          username: user.username,
          // A kept name keeps its key: one that collided when keys were widened (see the
          // migrations) must not block every other change to that account.
          username_key: sql<string>`CASE WHEN username = ${user.username} THEN username_key ELSE ${usernameKey(user.username)} END`,
          password_hash: user.passwordHash,
          profile: JSON.stringify(toProfile(user)),
          updated_at: Date.now(),
        })
        .where('id', '=', user.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return fromRow(row);
    } catch (err) {
      throw translateUnique(err);
    }
  }

  async delete(id: number): Promise<boolean> {
    const result = await this.sql.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async countAdmins(): Promise<number> {
    return (await this.list()).filter((u) => u.perm.admin).length;
  }
}

function translateUnique(err: unknown): unknown {
  if (isUniqueViolation(err)) return conflict('a user with this username already exists');
  return err;
}
