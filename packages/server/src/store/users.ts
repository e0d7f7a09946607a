import type { Permissions, Rule, Sorting, User } from '@filebrowser/contract';
import { conflict } from '../errors.js';
import { usernameKey } from '../auth/usernames.js';
import type { Db } from './db.js';

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
  constructor(private readonly db: Db) {}

  list(): StoredUser[] {
    return (this.db.prepare('SELECT * FROM users ORDER BY id').all() as Row[]).map(fromRow);
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
  }

  get(id: number): StoredUser | undefined {
    const row = this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as Row | undefined;
    return row && fromRow(row);
  }

  /**
   * The account a typed name means: the one with the same key (NFKC, case folded). A name spelt
   * exactly as stored wins, so that accounts whose keys collided when the key was widened to NFKC
   * (see the schema migration) can still sign in by their own spelling.
   */
  getByUsername(username: string): StoredUser | undefined {
    const exact = username.normalize('NFC');
    const row = this.db
      .prepare(
        'SELECT * FROM users WHERE username = ? OR username_key = ? ORDER BY username = ? DESC LIMIT 1',
      )
      .get(exact, usernameKey(username), exact) as Row | undefined;
    return row && fromRow(row);
  }

  /** Inserts a user; `id` may be given to keep ids when importing. Duplicate names or ids answer 409. */
  create(user: NewUser, id?: number): StoredUser {
    try {
      const info = this.db
        .prepare(
          'INSERT INTO users (id, username, username_key, password_hash, profile, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(
          id ?? null,
          user.username,
          usernameKey(user.username),
          user.passwordHash,
          JSON.stringify(toProfile(user)),
          Date.now(),
        );
      return this.get(Number(info.lastInsertRowid))!;
    } catch (err) {
      throw translateUnique(err);
    }
  }

  /** Replaces a stored user by id. Duplicate names answer 409. */
  update(user: StoredUser): StoredUser {
    try {
      this.db
        .prepare(
          // A kept name keeps its key: one that collided when keys were widened (see the
          // migrations) must not block every other change to that account.
          `UPDATE users SET username = @username,
             username_key = CASE WHEN username = @username THEN username_key ELSE @key END,
             password_hash = @hash, profile = @profile, updated_at = @now WHERE id = @id`,
        )
        .run({
          username: user.username,
          key: usernameKey(user.username),
          hash: user.passwordHash,
          profile: JSON.stringify(toProfile(user)),
          now: Date.now(),
          id: user.id,
        });
      return this.get(user.id)!;
    } catch (err) {
      throw translateUnique(err);
    }
  }

  delete(id: number): boolean {
    return this.db.prepare('DELETE FROM users WHERE id = ?').run(id).changes > 0;
  }

  countAdmins(): number {
    return this.list().filter((u) => u.perm.admin).length;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}

function translateUnique(err: unknown): unknown {
  const code = (err as { code?: string }).code ?? '';
  if (code.startsWith('SQLITE_CONSTRAINT')) return conflict('a user with this username already exists');
  return err;
}
