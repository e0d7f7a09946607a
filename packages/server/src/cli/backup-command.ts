import { Command } from 'commander';
import { backupDatabase, restoreDatabase } from '../store/backup.js';
import { isNewDatabase, SCHEMA_VERSION } from '../store/db.js';
import { dumpPostgres, restorePostgres } from '../store/postgres-backup.js';
import { isPostgresUrl } from '../store/sql.js';
import { describePostgresUrl } from '../store/postgres.js';
import { addStoreOptions, commandDatabase } from './database.js';
import { CliError, resolvePath, type CliIO } from './io.js';

/** `filebrowser backup FILE`: a consistent copy of the database, also while the server runs. */
export function backupCommand(io: CliIO): Command {
  return addStoreOptions(new Command('backup'))
    .argument('<file>', 'where to write the copy (replaced if it exists)')
    .description('copy the database, also while the server runs (SQLite online backup, file mode 0600)')
    .action(async (file: string, _opts, cmd: Command) => {
      const { database } = commandDatabase(cmd, io);
      const target = resolvePath(io, file);
      if (isPostgresUrl(database)) {
        await dumpPostgres(database, target);
        io.out(`Backed up ${describePostgresUrl(database)} with pg_dump (custom format) to ${target}\n`);
        return;
      }
      if (isNewDatabase(database)) throw new CliError(`database ${database} does not exist`);
      // A database from a newer version is copied too: the copy is bytes, not read as a schema.
      const { version } = await backupDatabase(database, target);
      io.out(`Backed up ${database} (schema ${version}) to ${target}\n`);
    });
}

/** `filebrowser restore FILE`: puts a backup back, with the server stopped. */
export function restoreCommand(io: CliIO): Command {
  return addStoreOptions(new Command('restore'))
    .argument('<file>', 'a backup made by "filebrowser backup" (or a copy of a stopped server\'s database)')
    .description('replace the database with a backup; the server must be stopped')
    .action(async (file: string, _opts, cmd: Command) => {
      const { database } = commandDatabase(cmd, io);
      const source = resolvePath(io, file);
      if (isPostgresUrl(database)) {
        await restorePostgres(source, database);
        io.out(`Restored ${source} into ${describePostgresUrl(database)} with pg_restore\n`);
        return;
      }
      const result = restoreDatabase(source, database);
      io.out(`Restored ${source} (schema ${result.version}) into ${database}\n`);
      if (result.version < SCHEMA_VERSION) {
        io.out(`It is upgraded to schema ${SCHEMA_VERSION} when the server or a command next opens it.\n`);
      }
      if (result.replaced) {
        io.out(`The database it replaced is kept as ${result.replaced} (until the next restore).\n`);
      }
    });
}
