import type { DavLockInfo } from '@filebrowser/contract';
import { Command } from 'commander';
import { breakLock, locksInForce } from '../files/change/lock-list.js';
import { addStoreOptions, commandContext, withStore } from './database.js';
import { CliError, type CliIO } from './io.js';
import { formatTable } from './table.js';

/**
 * `filebrowser locks ls|break`: WebDAV locks in force, and breaking one (a client that left a
 * lock behind), as administrators do through `/api/dav/locks` and the settings page.
 */
export function locksCommand(io: CliIO): Command {
  const locks = new Command('locks').description('list and break WebDAV locks');

  addStoreOptions(locks.command('ls'))
    .description('list the WebDAV locks in force')
    .action((_opts, cmd: Command) =>
      withStore(cmd, io, async (opened) =>
        printLocks(io, await locksInForce(commandContext(opened, io), { sweep: false })),
      ),
    );

  addStoreOptions(locks.command('break'))
    .argument('<token...>', 'the tokens of the locks to break (see "locks ls")')
    .description('break WebDAV locks: others may write there again')
    .action((tokens: string[], _opts, cmd: Command) =>
      withStore(cmd, io, async (opened) => {
        const ctx = commandContext(opened, io);
        const unknown: string[] = [];
        for (const t of tokens) if (!(await ctx.store.davLocks.get(t))) unknown.push(t);
        if (unknown.length > 0) throw new CliError(`no such lock: ${unknown.join(', ')} (see "locks ls")`);
        for (const token of tokens) {
          const broken = (await breakLock(ctx, token))!;
          io.out(`Broke the lock of ${broken.username || 'a deleted user'} on ${broken.path}.\n`);
        }
      }),
    );

  return locks;
}

const time = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function printLocks(io: CliIO, list: DavLockInfo[]): void {
  if (list.length === 0) {
    io.out('No WebDAV locks.\n');
    return;
  }
  const rows = list.map((l) => [l.token, l.username, l.path, l.scope, l.depth, time(l.expiresAt), l.owner]);
  io.out(formatTable([['Token', 'User', 'Path', 'Scope', 'Depth', 'Until', 'Owner'], ...rows]));
}
