import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { describePostgresUrl } from './postgres.js';

const run = promisify(execFile);

/** Why a PostgreSQL tool failed, told without the URL's password. */
export class PostgresToolError extends Error {
  override name = 'PostgresToolError';
}

async function tool(program: 'pg_dump' | 'pg_restore', args: string[], url: string): Promise<void> {
  try {
    // The URL goes through the environment's conventional variable, never on a command line that
    // `ps` shows to every account.
    await run(program, args, {
      env: { ...process.env, ...libpqEnvironment(url) },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') {
      throw new PostgresToolError(
        `${program} is not installed: it comes with PostgreSQL's client tools (Debian: apt-get install postgresql-client)`,
      );
    }
    const said = (e.stderr ?? e.message).trim().split('\n')[0] ?? '';
    throw new PostgresToolError(
      `${program} failed for ${describePostgresUrl(url)}: ${said.replaceAll(url, '…')}`,
    );
  }
}

/** The URL as libpq's environment variables (PGHOST, PGPASSWORD, …): nothing of it on a command line. */
export function libpqEnvironment(url: string): Record<string, string> {
  const u = new URL(url);
  const env: Record<string, string> = {};
  const put = (name: string, value: string | null | undefined) => {
    if (value) env[name] = value;
  };
  put('PGHOST', u.searchParams.get('host') ?? (u.hostname ? decodeURIComponent(u.hostname) : undefined));
  put('PGPORT', u.searchParams.get('port') ?? u.port);
  put('PGUSER', u.searchParams.get('user') ?? decodeURIComponent(u.username));
  put('PGPASSWORD', u.searchParams.get('password') ?? decodeURIComponent(u.password));
  put('PGDATABASE', decodeURIComponent(u.pathname.replace(/^\//, '')));
  put('PGSSLMODE', u.searchParams.get('sslmode'));
  return env;
}

/**
 * `filebrowser backup` on PostgreSQL: pg_dump's custom format, a consistent snapshot taken while
 * every instance keeps serving. The file is made 0600: it holds password hashes.
 */
export async function dumpPostgres(url: string, file: string): Promise<void> {
  fs.closeSync(fs.openSync(file, 'w', 0o600));
  fs.chmodSync(file, 0o600);
  await tool('pg_dump', ['--format=custom', '--no-owner', '--file', file], url);
}

/**
 * `filebrowser restore` on PostgreSQL: what a dump holds replaces the tables it names (pg_restore
 * --clean), in one transaction. Every instance must be stopped: they keep settings in memory.
 */
export async function restorePostgres(file: string, url: string): Promise<void> {
  if (!fs.existsSync(file)) throw new PostgresToolError(`${file} does not exist`);
  await tool(
    'pg_restore',
    [
      '--clean',
      '--if-exists',
      '--no-owner',
      '--single-transaction',
      '--dbname',
      libpqEnvironment(url).PGDATABASE ?? '',
      file,
    ],
    url,
  );
}
