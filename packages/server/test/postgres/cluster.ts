import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A throw-away PostgreSQL cluster in a temporary folder, for tests: Debian's `postgresql` package
 * (its binaries under /usr/lib/postgresql/<version>/bin), listening on a Unix socket in that folder
 * only, durability off (nothing in it outlives the run). PostgreSQL refuses to run as root: as root,
 * the cluster runs as the `postgres` user the package made.
 */
export interface Cluster {
  /** The URL of the cluster's own `postgres` database, from which others are made. */
  adminUrl: string;
  /** A new, empty database in the cluster; answers its URL. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

/** The folder of initdb and pg_ctl, or undefined when PostgreSQL is not installed. */
export function postgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = fs.readdirSync(base).sort((a, b) => Number(b) - Number(a));
  } catch {
    return undefined;
  }
  for (const v of versions) {
    const bin = path.join(base, v, 'bin');
    if (fs.existsSync(path.join(bin, 'initdb')) && fs.existsSync(path.join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

export async function startCluster(): Promise<Cluster> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql)');
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-pg-'));
  fs.chmodSync(dir, 0o755);
  const data = path.join(dir, 'data');
  const socket = path.join(dir, 'socket');
  fs.mkdirSync(socket);
  const as = async (program: string, args: string[]) => {
    const file = path.join(bin, program);
    if (asRoot) await run('runuser', ['-u', 'postgres', '--', file, ...args]);
    else await run(file, args);
  };
  if (asRoot) await run('chown', ['-R', 'postgres:postgres', dir]);
  await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  const options = [
    `-k ${socket}`,
    "-c listen_addresses=''",
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  await as('pg_ctl', ['-D', data, '-w', '-l', path.join(dir, 'log'), '-o', options, 'start']);
  const urlOf = (database: string) =>
    `postgres://postgres@localhost/${database}?host=${encodeURIComponent(socket)}`;
  return {
    adminUrl: urlOf('postgres'),
    createDatabase: () => createDatabase(urlOf('postgres')),
    async stop() {
      try {
        await as('pg_ctl', ['-D', data, '-w', '-m', 'immediate', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

let made = 0;

/** A new, empty database in the cluster whose `postgres` database is at `adminUrl`; answers its URL. */
export async function createDatabase(adminUrl: string): Promise<string> {
  const name = `fb_${process.pid}_${++made}_${Date.now().toString(36)}`;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
