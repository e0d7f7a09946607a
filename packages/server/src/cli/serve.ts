import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../app.js';
import { createAccount } from '../auth/accounts.js';
import { hashPassword, randomPassword } from '../auth/passwords.js';
import { ConfigError } from '../config/config-error.js';
import { databasePath, explicitOptions, resolveServerConfig } from '../config/load.js';
import type { OptionValues } from '../config/options.js';
import { serverRecordFromConfig } from '../config/server-record.js';
import type { ServerConfig } from '../config/types.js';
import type { AppContext } from '../context.js';
import { quickSetup } from '../setup.js';
import { guardConnections, serverOptions } from '../http/connections.js';
import { createLogger } from '../logging.js';
import { isNewStore, openStore, type Store } from '../store/index.js';
import { describePostgresUrl, dropPostgresSchema } from '../store/postgres.js';
import { isPostgresUrl } from '../store/sql.js';
import { lockDatabase } from '../store/server-lock.js';
import { ALL_PERMISSIONS } from '../store/users.js';
import type { CliIO } from './io.js';
import { Connections, shutDown } from './shutdown.js';

export interface RunningServer {
  /** Where the server answers, e.g. http://127.0.0.1:8080 or unix:/run/fb.sock. */
  url: string;
  /** Stops gracefully (see shutDown): requests in flight get the configured grace period. */
  close(): Promise<void>;
}

/** `filebrowser [flags]`: quick setup on first start, then serve until SIGINT/SIGTERM. */
export async function serve(flags: OptionValues, io: CliIO): Promise<RunningServer> {
  const explicit = explicitOptions(flags, io.env, io.places);
  for (const warning of explicit.warnings) io.err(`warning: ${warning}\n`);
  const database = databasePath(explicit, io.places);
  const postgres = isPostgresUrl(database);
  const firstStart = await isNewStore(database);
  const existedEmpty = !postgres && firstStart && fs.existsSync(database);
  // Checked before the database file is created, so a typo does not leave an empty database behind.
  if (firstStart) {
    const initial = resolveServerConfig(explicit, {}, io.places);
    checkRootFolder(initial.root);
    if (initial.cert) readTlsFiles(initial);
  }

  // Held while serving: a restore must not swap the file this server keeps writing. (PostgreSQL
  // is made for several servers at once.)
  const lock = postgres ? { release: () => undefined } : lockDatabase(database, 'serve');
  let store: Store;
  try {
    store = await openStore(database);
  } catch (err) {
    lock.release();
    throw err;
  }
  let app: FastifyInstance | undefined;
  // What this start created for the first administrator, taken back if the server cannot listen:
  // its password is shown only once, and only by a start that went on to serve.
  let undoSetup: () => unknown = !firstStart
    ? () => undefined
    : postgres
      ? () => dropPostgresSchema(database)
      : () => forgetDatabase(database, existedEmpty);
  try {
    const config = resolveServerConfig(explicit, firstStart ? {} : store.settings.getServer(), io.places);
    checkRootFolder(config.root);
    const log = openLog(config, io.places.cwd);
    const built = await buildApp(config, store, log.logger ? { logger: log.logger } : {});
    app = built.app;
    let announce = (): void => {};
    if (firstStart) {
      const result = await quickSetup(built.ctx, {
        username: (explicit.values.username as string | undefined) || 'admin',
        passwordHash: (explicit.values.password as string | undefined) ?? '',
        noauth: explicit.values.noauth === true,
      });
      await store.settings.saveServer(
        serverRecordFromConfig(config, pick(explicit.values, ['disableImageResolutionCalc'])),
      );
      announce = () => announceAdmin(io, result.username, result.generatedPassword);
    } else if ((await store.users.count()) === 0) {
      // A database made by `config init|import` without users: nobody could sign in.
      const username = (explicit.values.username as string | undefined) || 'admin';
      const admin = await createFirstAdmin(
        built.ctx,
        username,
        explicit.values.password as string | undefined,
      );
      announce = () => announceAdmin(io, username, admin.generatedPassword);
      undoSetup = () => store.users.delete(admin.id);
    }
    const listening = await listen(app, config);
    undoSetup = () => {};
    io.out(
      `Database: ${postgres ? describePostgresUrl(database) : path.resolve(database)}\nServing: ${config.root}\n`,
    );
    const metricsUrl = built.metricsListener?.url();
    if (metricsUrl) io.out(`Metrics: ${metricsUrl}\n`);
    announce();
    const connections = new Connections(listening.server);
    const running: RunningServer = {
      url: listening.url,
      close: () =>
        shutDown({
          connections,
          closeApp: () => app!.close(),
          closeStore: async () => {
            await store.close();
            lock.release();
          },
          graceSeconds: config.shutdownGrace,
          say: io.err,
        }),
    };
    // Before the line that tells the server is up: a signal sent on seeing it must find the handler.
    if (io.ownsProcess) closeOnSignals(running, io);
    if (io.ownsProcess) reportUnhandledRejections(log.logger ? app.log : undefined, io);
    // logrotate renames the file and sends SIGHUP: later lines go to a new file of the old name.
    if (io.ownsProcess && log.reopen) process.on('SIGHUP', log.reopen);
    io.out(`Listening on ${listening.url}\n`);
    return running;
  } catch (err) {
    await app?.close();
    if (!firstStart) await undoSetup();
    await store.close();
    // After closing: the first start's database goes as a whole, -wal folded in and removed.
    if (firstStart) await undoSetup();
    lock.release();
    throw err;
  }
}

/** A first start that did not serve leaves the database as it found it: absent, or empty. */
function forgetDatabase(database: string, existedEmpty: boolean): void {
  for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(database + suffix, { force: true });
  if (existedEmpty) fs.truncateSync(database, 0);
  else fs.rmSync(database, { force: true });
}

function pick(values: OptionValues, names: string[]): OptionValues {
  return Object.fromEntries(names.filter((n) => values[n] !== undefined).map((n) => [n, values[n]!]));
}

function checkRootFolder(root: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(root);
  } catch {
    throw new ConfigError(`root folder ${root} does not exist`);
  }
  if (!stat.isDirectory()) throw new ConfigError(`root ${root} is not a folder`);
}

async function createFirstAdmin(
  ctx: AppContext,
  username: string,
  passwordHash?: string,
): Promise<{ id: number; generatedPassword?: string }> {
  const generated = passwordHash ? undefined : randomPassword(12);
  // A generated password is hashed here: 12 random bytes need no check against the common
  // passwords, whose list (15 MB) would otherwise stay in a server that never sets another one.
  const hash = passwordHash || (await hashPassword(generated!, ctx.config.bcryptCost));
  const user = await createAccount(
    ctx,
    { username, perm: { ...ALL_PERMISSIONS }, scope: '.' },
    hash,
    'setup',
    { passwordIsHash: true, createHome: false },
  );
  return { id: user.id, ...(generated === undefined ? {} : { generatedPassword: generated }) };
}

/**
 * The first administrator's credentials go straight to the console, once: never through the
 * logger, so they cannot end up in a log file (File Browser logged them).
 */
function announceAdmin(io: CliIO, username: string, generatedPassword: string | undefined): void {
  if (generatedPassword === undefined) {
    io.out(`Created the administrator "${username}" with the password hash given by --password.\n`);
    return;
  }
  io.out(
    [
      '',
      'Created the administrator account:',
      `  username: ${username}`,
      `  password: ${generatedPassword}`,
      'This password is shown only once. Sign in and change it in Settings > Profile.',
      '',
      '',
    ].join('\n'),
  );
}

/** The process's log per --log: stdout, stderr, "" for none, or a file reopened on SIGHUP. */
function openLog(config: ServerConfig, cwd: string): { logger?: FastifyBaseLogger; reopen?: () => void } {
  if (config.log === '') return {};
  const file = config.log === 'stdout' || config.log === 'stderr' ? undefined : path.resolve(cwd, config.log);
  // Synchronous writes: a line is in the file before the next request is answered, and none is
  // lost when the process exits.
  const dest = pino.destination({
    dest: file ?? (config.log === 'stderr' ? 2 : 1),
    sync: true,
    ...(file ? { mkdir: true, append: true } : {}),
  });
  return {
    logger: createLogger(dest, config.logFormat, config.logLevel),
    ...(file ? { reopen: () => dest.reopen() } : {}),
  };
}

interface Listening {
  url: string;
  /** The server that accepted the connections (Fastify's own, or ours for HTTPS). */
  server: http.Server | https.Server;
}

function urlOf(scheme: string, address: AddressInfo | string | null): string {
  if (!address || typeof address === 'string') return `${scheme}://${String(address)}`;
  const host =
    address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}

async function listen(app: FastifyInstance, config: ServerConfig): Promise<Listening> {
  if (config.socket) return listenOnSocket(app, config);
  if (config.cert) return listenTls(app, config);
  const hosts = config.address ? [config.address] : ['::', '0.0.0.0'];
  for (const [i, host] of hosts.entries()) {
    try {
      await app.listen({ host, port: config.port });
      break;
    } catch (err) {
      // An empty address means every interface; fall back to IPv4 where IPv6 is missing.
      if (i === hosts.length - 1 || !isFamilyError(err)) throw listenError(err, config);
    }
  }
  return { url: urlOf('http', app.server.address()), server: app.server };
}

function isFamilyError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EAFNOSUPPORT' || code === 'EADDRNOTAVAIL';
}

function listenError(err: unknown, config: ServerConfig): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const where = config.socket || `${config.address || '*'}:${config.port}`;
  if (code === 'EADDRINUSE')
    return new ConfigError(`cannot listen on ${where}: the address is already in use`);
  if (code === 'EACCES') return new ConfigError(`cannot listen on ${where}: permission denied`);
  if (code === 'EADDRNOTAVAIL') return new ConfigError(`cannot listen on ${where}: no such local address`);
  return err as Error;
}

async function listenOnSocket(app: FastifyInstance, config: ServerConfig): Promise<Listening> {
  // A socket file left by a server that did not shut down cleanly would make listen fail.
  try {
    if (fs.lstatSync(config.socket).isSocket()) fs.unlinkSync(config.socket);
  } catch {
    // Nothing there.
  }
  try {
    await app.listen({ path: config.socket });
  } catch (err) {
    throw listenError(err, config);
  }
  fs.chmodSync(config.socket, config.socketPerm);
  return { url: `unix:${config.socket}`, server: app.server };
}

function readTlsFiles(config: ServerConfig): { cert: Buffer; key: Buffer } {
  const read = (file: string, what: string) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      const reason =
        (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
      throw new ConfigError(`cannot read the TLS ${what} ${file}: ${reason}`);
    }
  };
  return { cert: read(config.cert, 'certificate'), key: read(config.key, 'key') };
}

/**
 * HTTPS through our own server handing requests to Fastify's router: buildApp creates the
 * Fastify instance without TLS options. WebSocket upgrades are forwarded to Fastify's server.
 */
async function listenTls(app: FastifyInstance, config: ServerConfig): Promise<Listening> {
  let server: https.Server;
  try {
    server = https.createServer(
      {
        ...readTlsFiles(config),
        minVersion: 'TLSv1.2',
        ...serverOptions(config),
        // A connection that never completes its handshake is bounded like one that never sends its headers.
        handshakeTimeout: config.headersTimeout * 1000,
      },
      (req, res) => app.routing(req, res),
    );
  } catch (err) {
    throw new ConfigError(`invalid TLS certificate or key: ${(err as Error).message.split('\n')[0]}`);
  }
  guardConnections(server, config, app.log);
  server.on('upgrade', (req, socket, head) => app.server.emit('upgrade', req, socket, head));
  await app.ready();
  const hosts = config.address ? [config.address] : ['::', '0.0.0.0'];
  for (const [i, host] of hosts.entries()) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      break;
    } catch (err) {
      if (i === hosts.length - 1 || !isFamilyError(err)) throw listenError(err, config);
    }
  }
  return { url: urlOf('https', server.address()), server };
}

/**
 * The process's answer to a rejected promise nobody handled. None should happen: every promise
 * is awaited, handled where it is made or given to `inBackground` (docs/ARCHITECTURE.md,
 * "Promises"). Node's default would end the process, and with it every upload, download and
 * command in flight; for a condition that lasts (a full disk), again after every restart. The
 * work the promise belonged to has settled (its cleanup has run), so the server reports the
 * fault and goes on serving. An exception thrown out of a callback still ends the process:
 * it stops code in the middle of a change, whose state nothing can vouch for.
 */
function reportUnhandledRejections(log: FastifyBaseLogger | undefined, io: CliIO): void {
  process.on('unhandledRejection', (reason: unknown) => {
    const message = 'a failure nobody waited for (a fault of the server); it goes on serving';
    if (log) log.error({ event: 'unhandled_rejection', err: reason }, message);
    else
      io.err(`${message}: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}\n`);
  });
}

/** How long the process may take to end by itself once everything is closed. */
const EXIT_SETTLE_MS = 2000;

function closeOnSignals(running: RunningServer, io: CliIO): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals | 'disconnect') => {
    if (stopping) {
      if (signal === 'disconnect') return;
      // A second signal: the user insists. SQLite's journal keeps the database whole anyway.
      io.err(`Received ${signal} again, exiting at once.\n`);
      process.exit(1);
    }
    stopping = true;
    io.err(
      signal === 'disconnect'
        ? 'The process that started the server (npm start) is gone, shutting down.\n'
        : `Received ${signal}, shutting down.\n`,
    );
    running.close().then(
      () => {
        // Ending by itself lets the clean-up of requests that were cut (their staging files)
        // finish; something left holding the process does not keep it from ending.
        process.exitCode = 0;
        setTimeout(() => process.exit(0), EXIT_SETTLE_MS).unref();
      },
      (err: unknown) => {
        io.err(`error while shutting down: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // `npm start` runs the server in a session of its own with a channel to it (scripts/start.mjs):
  // the channel closing means that process died without passing a signal on.
  if (process.channel) {
    process.channel.unref();
    process.once('disconnect', () => stop('disconnect'));
  }
}
