import { Command } from 'commander';
import { copyStore, CopyRefused } from '../store/copy.js';
import { removeDatabaseFiles } from '../store/db.js';
import { isNewStore, openSql } from '../store/index.js';
import { describePostgresUrl, dropPostgresSchema } from '../store/postgres.js';
import { isPostgresUrl } from '../store/sql.js';
import { CliError, resolvePath, type CliIO } from './io.js';

/** A database as a person reads it: a SQLite file's path, a URL without its password. */
const described = (database: string) => (isPostgresUrl(database) ? describePostgresUrl(database) : database);

/**
 * `filebrowser db copy --from A --to B`: everything a store holds, from SQLite to PostgreSQL
 * (moving to several instances) or back. The server should be stopped: what it writes during the
 * copy would be missing from it.
 */
export function dbCommand(io: CliIO): Command {
  const db = new Command('db').description('work on the database as a whole');
  db.command('copy')
    .requiredOption('--from <database>', 'the database to copy: a SQLite file or a postgres:// URL')
    .requiredOption(
      '--to <database>',
      'a new database: a SQLite file that does not exist yet, or an empty PostgreSQL database',
    )
    .description(
      'copy users, settings, sessions, shares, tokens, trash, audit log, locks, … to another database',
    )
    .action(async (opts: { from: string; to: string }) => {
      const from = isPostgresUrl(opts.from) ? opts.from : resolvePath(io, opts.from);
      const to = isPostgresUrl(opts.to) ? opts.to : resolvePath(io, opts.to);
      if (await isNewStore(from))
        throw new CliError(`database ${described(from)} does not exist or holds nothing`);
      if (!(await isNewStore(to))) {
        throw new CliError(
          `database ${described(to)} already holds File Browser's data: copy into a new database`,
        );
      }
      const source = await openSql(from);
      try {
        const target = await openSql(to);
        let copied;
        try {
          copied = await copyStore(source.sql, target.sql);
        } catch (err) {
          await target.sql.destroy();
          // What the copy made goes: the target is as it was, new.
          if (isPostgresUrl(to)) await dropPostgresSchema(to);
          else removeDatabaseFiles(to);
          if (err instanceof CopyRefused) throw new CliError(err.message);
          throw err;
        }
        await target.sql.destroy();
        const total = [...copied.values()].reduce((a, b) => a + b, 0);
        const detail = [...copied]
          .filter(([, n]) => n > 0)
          .map(([t, n]) => `${t} ${n}`)
          .join(', ');
        io.out(
          `Copied ${total} rows from ${described(from)} to ${described(to)} (${detail}); the counts match.\n`,
        );
      } finally {
        await source.sql.destroy();
      }
    });
  return db;
}
