import path from 'node:path';
import { Command } from 'commander';
import { createAccount, deleteAccount, updateAccount } from '../auth/accounts.js';
import { addOptions, flagValues } from '../config/sources.js';
import type { Repos, Store } from '../store/index.js';
import { usernameKey } from '../auth/usernames.js';
import { ALL_PERMISSIONS, type StoredUser } from '../store/users.js';
import { permissionList } from './config-command.js';
import { addStoreOptions, commandContext, withStore } from './database.js';
import { readExportFile, writeExportFile, formatOf } from './export-files.js';
import { CliError, resolvePath, type CliIO } from './io.js';
import { userFromExport, userToExport, type ImportedUser } from './migration.js';
import { formatTable } from './table.js';
import { sortingFromFlags, userChangesFromFlags, USER_OPTIONS } from './user-flags.js';

/** `filebrowser users add|ls|find|update|rm|export|import`. */
export function usersCommand(io: CliIO): Command {
  const users = new Command('users').description('manage users');

  addOptions(addStoreOptions(users.command('add')), USER_OPTIONS)
    .argument('<username>')
    .argument('<password>')
    .description('create a user; flags not given take the default user settings')
    .action((username: string, password: string, _opts, cmd: Command) =>
      withStore(cmd, io, async (opened) => {
        const ctx = commandContext(opened, io);
        const defaults = opened.store.settings.get().defaults;
        const values = flagValues(cmd, USER_OPTIONS);
        const { data, fields } = userChangesFromFlags(values, defaults.perm);
        if (fields.includes('sorting')) data.sorting = sortingFromFlags(values, defaults.sorting);
        const user = await createAccount(ctx, { ...data, username }, password, 'cli');
        printUsers(io, [user]);
      }),
    );

  addStoreOptions(users.command('ls'))
    .description('list all users')
    .action((_opts, cmd: Command) =>
      withStore(cmd, io, async ({ store }) => printUsers(io, await store.users.list())),
    );

  addStoreOptions(users.command('find'))
    .argument('<id|username>')
    .description('show one user')
    .action((ref: string, _opts, cmd: Command) =>
      withStore(cmd, io, async ({ store }) => printUsers(io, [await findUser(store, ref)])),
    );

  addOptions(addStoreOptions(users.command('update')), USER_OPTIONS)
    .argument('<id|username>')
    .option('-p, --password <password>', 'new password')
    .option('-u, --username <username>', 'new username')
    .description('change the given fields of a user; fields without a flag stay as they are')
    .action((ref: string, opts: { password?: string; username?: string }, cmd: Command) =>
      withStore(cmd, io, async (opened) => {
        const ctx = commandContext(opened, io);
        const target = await findUser(opened.store, ref);
        const values = flagValues(cmd, USER_OPTIONS);
        const { data, fields } = userChangesFromFlags(values, target.perm);
        if (fields.includes('sorting')) data.sorting = sortingFromFlags(values, target.sorting);
        if (opts.password !== undefined) {
          data.password = opts.password;
          fields.push('password');
        }
        if (opts.username !== undefined) {
          data.username = opts.username;
          fields.push('username');
        }
        if (fields.length === 0) throw new CliError('nothing to change: give at least one flag');
        // The command line acts with an administrator's rights (whoever can open the database is one).
        const caller: StoredUser = { ...target, perm: { ...ALL_PERMISSIONS } };
        const { user, revokeSessions } = await updateAccount(ctx, caller, target, fields, data);
        if (revokeSessions) await opened.store.sessions.revokeUser(user.id);
        printUsers(io, [user]);
      }),
    );

  addStoreOptions(users.command('rm'))
    .argument('<id|username>')
    .description('delete a user (never the last administrator)')
    .action((ref: string, _opts, cmd: Command) =>
      withStore(cmd, io, async (opened) => {
        const user = await findUser(opened.store, ref);
        await deleteAccount(commandContext(opened, io), user.id);
        io.out(`User ${user.username} deleted.\n`);
      }),
    );

  addStoreOptions(users.command('export'))
    .argument('<file>', 'a .json, .yaml or .yml file')
    .description('write all users, with their password hashes, to a file (File Browser format)')
    .action((file: string, _opts, cmd: Command) =>
      withStore(cmd, io, async ({ store }) => {
        formatOf(file);
        writeExportFile(resolvePath(io, file), (await store.users.list()).map(userToExport));
        io.out(`Users exported to ${file}\n`);
      }),
    );

  addStoreOptions(users.command('import'))
    .argument('<file>', 'a users export of File Browser or of this server (.json, .yaml, .yml)')
    .option('--overwrite', 'replace users whose id already exists')
    .option('--replace', 'delete every current user first (they are saved to a backup file)')
    .description('add the users of an export file, keeping their password hashes')
    .action((file: string, opts: { overwrite?: boolean; replace?: boolean }, cmd: Command) => {
      const list = readImportList(resolvePath(io, file));
      return withStore(cmd, io, async (opened) => {
        const { store } = opened;
        if (opts.replace) {
          const backup = path.join(
            path.dirname(opened.database),
            `users-backup-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
          );
          writeExportFile(backup, (await store.users.list()).map(userToExport));
          io.out(`Current users saved to ${backup}\n`);
        }
        const counts = await store.transaction((tx) => importUsers(tx, list, opts));
        io.out(`Imported ${counts.created + counts.replaced} users (${counts.replaced} replaced).\n`);
        if ((await store.users.countAdmins()) === 0) {
          io.err(
            'warning: no user is an administrator now; add one with "filebrowser users add --perm.admin"\n',
          );
        }
      });
    });

  return users;
}

export async function findUser(store: Store, ref: string): Promise<StoredUser> {
  const user = /^\d+$/.test(ref) ? await store.users.get(Number(ref)) : await store.users.getByUsername(ref);
  if (!user) throw new CliError(`user "${ref}" does not exist`);
  return user;
}

function printUsers(io: CliIO, users: StoredUser[]): void {
  const header = [
    'ID',
    'Username',
    'Scope',
    'Locale',
    'View mode',
    'Single click',
    'Password lock',
    'Permissions',
  ];
  const rows = users.map((u) => [
    String(u.id),
    u.username,
    u.scope,
    u.locale,
    u.viewMode,
    String(u.singleClick),
    String(u.lockPassword),
    permissionList(u.perm),
  ]);
  io.out(formatTable([header, ...rows]));
}

/** Reads and checks the whole file before the database is touched. */
function readImportList(file: string): ImportedUser[] {
  const doc = readExportFile(file);
  if (!Array.isArray(doc)) throw new CliError(`${file} is not a users export: expected a list of users`);
  const list = doc.map((u, i) => userFromExport(u, i));
  const names = new Set<string>();
  const ids = new Set<number>();
  for (const { id, user } of list) {
    const key = usernameKey(user.username);
    if (names.has(key)) throw new CliError(`the file lists the username "${user.username}" twice`);
    if (id && ids.has(id)) throw new CliError(`the file lists the id ${id} twice`);
    names.add(key);
    if (id) ids.add(id);
  }
  return list;
}

/**
 * Writes the imported users (inside a transaction: any error keeps the database unchanged).
 * A user keeps its id when that id is free, so share links and "noauth" (user 1) keep pointing
 * at the same person; an id in use needs --overwrite; a username in use by another user is an error.
 */
async function importUsers(
  store: Repos,
  list: ImportedUser[],
  opts: { overwrite?: boolean; replace?: boolean },
): Promise<{ created: number; replaced: number }> {
  if (opts.replace) {
    for (const old of await store.users.list()) {
      // Links of a removed account must not pass to an imported user who gets its id.
      await store.shares.deleteByUser(old.id);
      await store.apiTokens.deleteByUser(old.id);
      await store.users.delete(old.id);
    }
  }
  let created = 0;
  let replaced = 0;
  for (const { id, user } of list) {
    const sameId = id ? await store.users.get(id) : undefined;
    const sameName = await store.users.getByUsername(user.username);
    if (sameName && sameName.id !== sameId?.id) {
      throw new CliError(`username "${user.username}" is already taken by user ${sameName.id}`);
    }
    if (sameId) {
      if (!opts.overwrite) {
        throw new CliError(
          `user id ${id} (${sameId.username}) already exists: use --overwrite to replace it`,
        );
      }
      await store.users.update({ ...user, quota: user.quota ?? 0, id, updatedAt: Date.now() });
      await store.sessions.revokeUser(id);
      // An imported record may be another person: nothing made by the one it replaces carries over.
      await store.apiTokens.deleteByUser(id);
      replaced++;
    } else {
      await store.users.create(user, id || undefined);
      created++;
    }
  }
  return { created, replaced };
}
