// The WebDAV reference: a private Apache httpd (own self-contained config, pid, logs, lock
// database) with mod_dav and mod_dav_fs serving the data folder on 127.0.0.1. Debian's
// /etc/apache2 is not used: its config needs the APACHE_RUN_* variables of apache2ctl.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopChild, track } from './cleanup.mjs';
import { watchCpu } from './cpu.mjs';
import { request } from './http.mjs';
import { freePort, which } from './proc.mjs';

/**
 * @typedef {object} Apache
 * @property {string} base e.g. http://127.0.0.1:41236
 * @property {string} version e.g. "Apache/2.4.62 (Debian)"
 * @property {number} pid the httpd parent (its children are the workers)
 * @property {() => Promise<void>} stop
 */

const MODULE_DIRS = ['/usr/lib/apache2/modules', '/usr/lib64/httpd/modules', '/usr/lib/httpd/modules'];

/** @returns {string | null} the folder holding mod_dav_fs.so */
function moduleDir() {
  return MODULE_DIRS.find((d) => fs.existsSync(path.join(d, 'mod_dav_fs.so'))) ?? null;
}

/**
 * httpd refuses to serve as root (unlike nginx, which the listing row runs as root): as root,
 * its children run as www-data (or nobody), which may traverse the 0700 temp folder, read the
 * data (files are created 0644) and write the given folders and its own.
 * @param {{ workDir: string, dataRoot: string, dir: string, writable: string[] }} where
 * @returns {string} the User and Group directives
 */
function asServiceUser({ workDir, dataRoot, dir, writable }) {
  const name = ['www-data', 'nobody'].find((n) => {
    try {
      return execFileSync('id', ['-u', n], { stdio: ['ignore', 'pipe', 'ignore'] }).length > 0;
    } catch {
      return false;
    }
  });
  if (!name) throw new Error('running as root and neither www-data nor nobody exists for apache2');
  const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
  for (let d = dataRoot; d.startsWith(workDir); d = path.dirname(d)) {
    fs.chmodSync(d, fs.statSync(d).mode | 0o711);
    if (d === workDir) break;
  }
  for (const d of [dir, ...writable]) fs.chownSync(d, uid, gid);
  return `User ${name}\nGroup #${gid}`;
}

/**
 * @param {{ workDir: string, dataRoot: string, writable: string[], log: (msg: string) => void }} options
 *   writable: folders below dataRoot that PUT writes into
 * @returns {Promise<Apache | null>} null when apache2 or its DAV modules are not installed
 */
export async function startApache({ workDir, dataRoot, writable, log }) {
  const bin = which('apache2') ?? which('httpd');
  const mods = moduleDir();
  if (!bin || !mods) return null;
  const dir = path.join(workDir, 'apache');
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const q = (/** @type {string} */ p) => JSON.stringify(p);
  const mod = (/** @type {string} */ name, /** @type {string} */ file) =>
    fs.existsSync(path.join(mods, file)) ? `LoadModule ${name} ${q(path.join(mods, file))}` : '';
  const user = process.getuid?.() === 0 ? asServiceUser({ workDir, dataRoot, dir, writable }) : '';
  // One child process, like our server and the nginx reference (one worker); its threads serve
  // the connections. mod_mime gives getcontenttype as a client sees it from a stock install.
  const conf = `
ServerRoot ${q(dir)}
ServerName 127.0.0.1
PidFile ${q(path.join(dir, 'httpd.pid'))}
DefaultRuntimeDir ${q(dir)}
Mutex file:${dir} default
ErrorLog ${q(path.join(dir, 'error.log'))}
LogLevel warn
Listen 127.0.0.1:${port}
${user}
${mod('mpm_event_module', 'mod_mpm_event.so')}
${mod('authz_core_module', 'mod_authz_core.so')}
${mod('mime_module', 'mod_mime.so')}
${mod('dav_module', 'mod_dav.so')}
${mod('dav_fs_module', 'mod_dav_fs.so')}
${mod('dav_lock_module', 'mod_dav_lock.so')}
StartServers 1
ServerLimit 1
MinSpareThreads 1
MaxSpareThreads 64
ThreadsPerChild 64
MaxRequestWorkers 64
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 65
LimitRequestBody 0
TypesConfig /etc/mime.types
DavLockDB ${q(path.join(dir, 'davlock'))}
DocumentRoot ${q(dataRoot)}
<Directory />
  Require all denied
</Directory>
<Directory ${q(dataRoot)}>
  Dav On
  Require all granted
</Directory>
`;
  const confFile = path.join(dir, 'apache2.conf');
  fs.writeFileSync(confFile, conf);
  const errorLog = path.join(dir, 'error.log');
  const child = track(
    spawn(bin, ['-d', dir, '-f', confFile, '-DFOREGROUND'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
    }),
  );
  let stderr = '';
  child.stderr?.on('data', (/** @type {Buffer} */ c) => (stderr = (stderr + c.toString()).slice(-4096)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  /** @type {string} */
  let version = 'Apache';
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const logText = fs.existsSync(errorLog) ? fs.readFileSync(errorLog, 'utf8').slice(-2000) : '';
      throw new Error(`apache2 exited during start: ${stderr.trim()} ${logText.trim()}`);
    }
    try {
      const r = await request(`${base}/`, { method: 'OPTIONS', timeoutMs: 2000 });
      if (r.status === 200) {
        if (!String(r.headers.dav ?? '').includes('1')) {
          await stopChild(child);
          throw new Error('apache2 answers without a DAV header: mod_dav is not active');
        }
        version = String(r.headers.server ?? version);
        break;
      }
    } catch (err) {
      if (/** @type {Error} */ (err).message.startsWith('apache2 answers')) throw err;
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error('apache2 did not answer within 15 s');
    }
    await sleep(100);
  }
  log(`apache: pid ${child.pid} on ${base} (${version}, mpm_event, 1 process)`);
  watchCpu('reference', /** @type {number} */ (child.pid));
  return { base, version, pid: /** @type {number} */ (child.pid), stop: () => stopChild(child) };
}
