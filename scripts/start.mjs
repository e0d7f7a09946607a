// `npm start`: builds what is missing or out of date, then serves with the embedded set-up
// (database ./data/filebrowser.db, files in ./data/files) unless flags, FB_* variables or a
// config file say otherwise. Arguments after `npm start --` go to the server unchanged.
//
// The server runs as a child process: its process settings (malloc arenas, the young
// generation's cap: packages/server/src/process-settings.ts) take effect only when a process
// starts, and Node cannot replace its own process. This one stays beside it only to pass
// signals on and to end with its exit code (about 10 MB of its own: docs/operations.md).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..');
const at = (...parts) => path.join(repo, ...parts);

/** Newest modification time of the files under these paths (0 when none exists). */
function newest(paths) {
  let latest = 0;
  const visit = (p) => {
    let stat;
    try {
      stat = fs.statSync(p);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(p))
        if (name !== 'node_modules' && name !== 'dist') visit(path.join(p, name));
    } else {
      latest = Math.max(latest, stat.mtimeMs);
    }
  };
  paths.forEach(visit);
  return latest;
}

function isStale(output, sources) {
  if (!fs.existsSync(output)) return true;
  return fs.statSync(output).mtimeMs < newest(sources);
}

const contract = at('packages/contract/src');
const webStale = isStale(at('packages/web/dist/index.html'), [
  at('packages/web/src'),
  at('packages/web/public'),
  at('packages/web/index.html'),
  at('packages/web/vite.config.ts'),
  contract,
]);
const serverStale = isStale(at('packages/server/dist/main.js'), [
  at('packages/server/src'),
  at('packages/server/build.mjs'),
  contract,
]);
if (webStale || serverStale) {
  console.log('Building the web app and the server (npm run build)...');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['run', 'build'], { cwd: repo, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const args = process.argv.slice(2);
const env = process.env;
const given = (short, long) =>
  args.some(
    (a) =>
      a === short || a === long || a.startsWith(`${long}=`) || (short && a.startsWith(short) && a.length > 2),
  );
const configFiles = [process.cwd(), os.homedir(), '/etc/filebrowser'].flatMap((dir) =>
  ['.filebrowser.json', '.filebrowser.yaml', '.filebrowser.yml'].map((name) => path.join(dir, name)),
);
// A config file or -c may name the database and root itself: then we add nothing.
const configured = given('-c', '--config') || configFiles.some((f) => fs.existsSync(f));

const defaults = [];
if (!configured && !given('-d', '--database') && env.FB_DATABASE === undefined) {
  defaults.push('--database', at('data/filebrowser.db'));
}
// data/ holds the database (password hashes, the key that signs tokens): only its owner enters.
if (!fs.existsSync(at('data'))) fs.mkdirSync(at('data'), { mode: 0o700 });
if (!configured && !given('-r', '--root') && env.FB_ROOT === undefined) {
  fs.mkdirSync(at('data/files'), { recursive: true });
  defaults.push('--root', at('data/files'));
}

const dist = at('packages/server/dist');
const { serverLaunch } = await import(path.join(dist, 'process-settings.js'));
const launch = serverLaunch(process.env);
// A process group of its own: Ctrl-C (and any signal sent to this group) reaches the server once,
// from here, not twice (the terminal's and ours), which it would take for "stop at once".
const server = spawn(
  process.execPath,
  [...launch.nodeArgs, path.join(dist, 'main.js'), ...defaults, ...args],
  {
    env: launch.env,
    // The channel tells the server when this process is gone (killed, crashed): being in a
    // session of its own, it would otherwise run on with nobody to stop it.
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: process.platform !== 'win32',
  },
);
server.channel?.unref();
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
// One Ctrl-C can arrive here twice: from the terminal, and passed on by npm when the script's
// shell hands its process over to node (bash does). The server takes a second signal for "stop at
// once", so a copy of the same signal right after the first is not passed on; a person pressing
// Ctrl-C again later is.
const SAME_SIGNAL_MS = 1000;
const lastSent = new Map();
const forward = (signal) => {
  const now = Date.now();
  if (now - (lastSent.get(signal) ?? -Infinity) < SAME_SIGNAL_MS) return;
  lastSent.set(signal, now);
  server.kill(signal);
};
for (const signal of forwarded) process.on(signal, forward);
server.on('error', (err) => {
  console.error(`npm start: could not start the server: ${err.message}`);
  process.exit(1);
});
server.on('exit', (code, signal) => {
  if (signal === null) process.exit(code ?? 1);
  // Ended by a signal: end by the same one, so that npm and the shell see what the server saw.
  for (const s of forwarded) process.off(s, forward);
  process.kill(process.pid, signal);
});
