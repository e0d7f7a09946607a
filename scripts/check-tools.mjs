// Run first by `npm test` and `npm run test:e2e`: the one list of system programs the tests
// drive. Missing ones are named in one line with the Debian packages that bring them; as root
// (CI, a fresh container) they are installed with apt-get instead. A missing Chromium or PostgreSQL stops the
// run here, before the browser driver would fail with a stack trace; without the others, the
// tests that need them are skipped with a printed reason (and fail under CI=true, where
// everything must run).
//
// `--no-install` only reports, even as root.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** name: program looked up on PATH (or the absolute path), pkg: Debian package, why: the tests. */
const TOOLS = [
  { name: 'chromium', path: chromium, pkg: 'chromium', why: 'browser journeys', required: true },
  { name: 'tar', pkg: 'tar', why: 'archive downloads' },
  { name: 'zip', pkg: 'zip', why: 'archive downloads' },
  { name: 'unzip', pkg: 'unzip', why: 'archive downloads' },
  { name: 'bzip2', pkg: 'bzip2', why: 'archive downloads' },
  { name: 'xz', pkg: 'xz-utils', why: 'archive downloads' },
  { name: 'zstd', pkg: 'zstd', why: 'archive downloads' },
  { name: 'lz4', pkg: 'lz4', why: 'archive downloads' },
  { name: 'litmus', pkg: 'litmus', why: 'WebDAV protocol suites' },
  { name: 'rclone', pkg: 'rclone', why: 'WebDAV client test' },
  { name: 'python3', pkg: 'python3', why: 'folder-swap test' },
  { name: 'bwrap', pkg: 'bubblewrap', why: 'the command runner’s sandbox' },
  { name: 'prlimit', pkg: 'util-linux', why: 'the command runner’s resource limits' },
  { name: 'mkfifo', pkg: 'coreutils', why: 'command runner quota tests' },
  { name: 'nginx', pkg: 'nginx', why: 'reverse-proxy recipe' },
  { name: 'caddy', pkg: 'caddy', why: 'reverse-proxy recipe' },
  { name: 'systemd-analyze', pkg: 'systemd', why: 'systemd unit' },
  // Debian keeps PostgreSQL's server programs off PATH, in /usr/lib/postgresql/<version>/bin.
  {
    name: 'initdb',
    find: postgresProgram('initdb'),
    pkg: 'postgresql',
    why: 'the store on PostgreSQL',
    required: true,
  },
  { name: 'pg_dump', pkg: 'postgresql-client', why: 'backups of a PostgreSQL store' },
];

/** Finds a PostgreSQL server program of any installed version, when it is asked. */
function postgresProgram(name) {
  return () => {
    // FB_POSTGRES_LIB: another place of the versions' folders (the tests of this script).
    const base = process.env.FB_POSTGRES_LIB || '/usr/lib/postgresql';
    let versions = [];
    try {
      versions = fs.readdirSync(base);
    } catch {
      return false;
    }
    return versions.some((v) => executable(path.join(base, v, 'bin', name)));
  };
}

function executable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name) {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => executable(path.join(dir, name)));
}

const present = (tool) => (tool.find ? tool.find() : tool.path ? executable(tool.path) : onPath(tool.name));
const missingTools = () => TOOLS.filter((t) => !present(t));

let missing = missingTools();
if (missing.length === 0) process.exit(0);

// A Chromium elsewhere (CHROMIUM_PATH) is not apt's to install.
const byApt = (tools) => tools.filter((t) => !(t.name === 'chromium' && process.env.CHROMIUM_PATH));
const packages = (tools) => [...new Set(tools.map((t) => t.pkg))];
const names = (tools) => tools.map((t) => `${t.name} (${t.why})`).join(', ');

const toInstall = packages(byApt(missing));
if (
  toInstall.length > 0 &&
  !process.argv.includes('--no-install') &&
  process.getuid?.() === 0 &&
  onPath('apt-get')
) {
  console.log(`check-tools: installing with apt-get: ${toInstall.join(' ')} (missing: ${names(missing)})`);
  for (const args of [
    ['update', '-q'],
    ['install', '-y', '-q', ...toInstall],
  ]) {
    const r = spawnSync('apt-get', args, {
      encoding: 'utf8',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status !== 0) {
      const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
      console.error(`check-tools: apt-get ${args[0]} failed:\n${tail}`);
      process.exit(1);
    }
  }
  missing = missingTools();
  if (missing.length === 0) process.exit(0);
}

const hints = [];
if (byApt(missing).length > 0)
  hints.push(`install with: apt-get install ${packages(byApt(missing)).join(' ')}`);
if (byApt(missing).length < missing.length) hints.push(`CHROMIUM_PATH=${chromium} is not a program`);
const fatal = process.env.CI === 'true' || missing.some((t) => t.required);
console.error(
  `check-tools: missing ${names(missing)}; ${hints.join('; ')}` +
    (fatal ? '' : ' (the tests that need them are skipped)'),
);
process.exit(fatal ? 1 : 0);
