import { inBackground } from '../../background.js';
import fastifyWebsocket, { type WebSocket } from '@fastify/websocket';
import { PathParams } from '@filebrowser/contract';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { recordTakenOver } from '../../audit/http.js';
import type { Caller } from '../../auth/caller.js';
import type { ServerContext } from '../../services.js';
import { AppError, forbidden } from '../../errors.js';
import { formatBytes } from '../../files/change/quota-hold.js';
import { mayExecute, prepareCommand } from '../../runner/command.js';
import { MAX_COMMAND_MESSAGE } from '../../runner/options.js';
import { describeResult, startProcess, succeeded, type RunningProcess } from '../../runner/process.js';
import { CommandRefused, NOT_ALLOWED } from '../../runner/refusal.js';
import { describeMode, runnerMode } from '../../runner/sandbox.js';
import type { StoredUser } from '../../store/users.js';
import { callerOf, currentUser } from '../guards.js';
import { ACCOUNT_CHANGES } from '../reach.js';
import { empty } from '../openapi/declare.js';

/** Websocket close codes (RFC 6455). */
const CLOSE = { normal: 1000, policy: 1008, tooBig: 1009, failure: 1011 } as const;

/** A client that opened the socket must send its command line within this time. */
const FIRST_MESSAGE_TIMEOUT_MS = 30_000;

/** Command sockets one user may have open at once: each may hold a running process group. */
export const MAX_SOCKETS_PER_USER = 4;

/**
 * Registers @fastify/websocket on the root app, once, with the message cap of the command socket.
 * Call it before registering any websocket route; `commandRoutes` registers it itself when missing.
 */
export async function registerWebsocket(app: FastifyInstance): Promise<void> {
  if (app.hasDecorator('websocketServer')) return;
  await app.register(fastifyWebsocket, {
    options: { maxPayload: MAX_COMMAND_MESSAGE },
    // A protocol error (an oversized message) makes ws close the socket with its own code (1009);
    // the plugin's default would drop the connection before that close frame is sent.
    errorHandler(error, socket, request) {
      request.log.info({ err: error }, 'websocket error');
      if (socket.readyState === socket.OPEN) socket.close(CLOSE.failure);
    },
  });
}

/** Browsers send Origin on websocket upgrades; it must name this server (gorilla's default check). */
function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true; // not a browser: nothing to forge
  const host = (request.headers.host ?? '').toLowerCase();
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.host.toLowerCase() === host) return true;
  // URL drops a default port that a Host header may carry.
  const defaultPort = url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '';
  return defaultPort !== '' && url.port === '' && `${url.host.toLowerCase()}:${defaultPort}` === host;
}

const requireSameOrigin: onRequestAsyncHookHandler = async (request) => {
  if (!sameOrigin(request)) throw forbidden('cross-origin websocket request');
};

function folderOf(request: FastifyRequest): string {
  return '/' + ((request.params as { '*'?: string })['*'] ?? '');
}

function send(socket: WebSocket, text: string): void {
  if (socket.readyState === socket.OPEN) socket.send(text);
}

function close(socket: WebSocket, code: number, reason = ''): void {
  if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING)
    socket.close(code, reason);
}

/** Resolves with the first non-blank text message, or undefined when the socket closes first. */
function firstCommandLine(socket: WebSocket): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      close(socket, CLOSE.policy, 'no command received');
      resolve(undefined);
    }, FIRST_MESSAGE_TIMEOUT_MS);
    const done = (value: string | undefined) => {
      clearTimeout(timer);
      socket.off('message', onMessage);
      socket.off('close', onClose);
      resolve(value);
    };
    const onMessage = (data: Buffer | ArrayBuffer | Buffer[]) => {
      const size = Array.isArray(data)
        ? data.reduce((n, b) => n + b.length, 0)
        : data instanceof ArrayBuffer
          ? data.byteLength
          : data.length;
      // ws enforces maxPayload already; this holds even if the plugin was registered with a larger one.
      if (size > MAX_COMMAND_MESSAGE) {
        close(socket, CLOSE.tooBig, 'message too big');
        done(undefined);
        return;
      }
      const text = Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data as ArrayBuffer).toString('utf8');
      if (text.trim() !== '') done(text);
    };
    const onClose = () => done(undefined);
    socket.on('message', onMessage);
    socket.on('close', onClose);
  });
}

/** How often a running command asks again whether its caller may still run it. */
const CALLER_RECHECK_MS = 1000;

/**
 * Stops `proc` once `caller` may no longer run it (the session ended, the token was revoked, the
 * user was deleted or lost *execute*, the scope or rules changed): a command keeps no right past
 * the moment it is withdrawn, however long it runs and whether it prints or not. Answers why it
 * was stopped, and the function that ends the watch.
 */
function watchCaller(
  caller: Caller,
  proc: RunningProcess,
  request: FastifyRequest,
): { reason: () => string; end: () => void } {
  let reason = 'access withdrawn';
  let checking = false;
  const check = async () => {
    try {
      await caller.now();
    } catch (err) {
      if (!(err instanceof AppError)) {
        request.log.warn({ err }, 'could not check again who runs a command');
        return;
      }
      reason = err.message;
      clearInterval(timer);
      proc.stop('revoked');
    }
  };
  const timer = setInterval(() => {
    // One check at a time: a slow database does not pile them up.
    if (checking) return;
    checking = true;
    inBackground(
      check().finally(() => (checking = false)),
      () => undefined,
    );
  }, CALLER_RECHECK_MS);
  timer.unref();
  return { reason: () => reason, end: () => clearInterval(timer) };
}

/**
 * `GET /api/command{path}` upgraded to a websocket (contract 12). The user is authenticated
 * and the origin checked before the upgrade (401, 403); permission is checked before any message is
 * read. One text message is the command line; each output line comes back as a text frame, stdout
 * and stderr interleaved; the socket then closes with 1000 (exit status 0) or 1011 (anything else,
 * the exit status in the close reason). Closing the socket kills the command's process group.
 */
export function commandRoutes(ctx: ServerContext): FastifyPluginAsync {
  return async (app) => {
    await registerWebsocket(app);
    const open = new Map<number, number>();
    if (!ctx.config.disableExec) {
      // Found out once, at start, and said where an administrator looks: sandbox or not.
      app.addHook('onReady', async () => {
        const { level, message } = describeMode(await runnerMode(ctx));
        ctx.log[level](message);
      });
    }

    async function handle(socket: WebSocket, request: FastifyRequest): Promise<void> {
      // Listened for before anything is awaited: a message the client sends at once would
      // otherwise arrive while the caller is being checked, and be lost. It is read only after.
      const firstLine = firstCommandLine(socket);
      const user = currentUser(request);
      if (!mayExecute(ctx, user)) {
        recordTakenOver(ctx, request, 403, {
          path: folderOf(request),
          detail: 'not allowed to run commands',
        });
        send(socket, NOT_ALLOWED);
        close(socket, CLOSE.policy);
        return;
      }
      const count = open.get(user.id) ?? 0;
      if (count >= MAX_SOCKETS_PER_USER) {
        send(socket, `Command not allowed: you already run ${count} commands.`);
        close(socket, CLOSE.policy);
        return;
      }
      open.set(user.id, count + 1);
      try {
        await run(socket, request, await callerOf(ctx, request, ['execute']), firstLine);
      } finally {
        const left = (open.get(user.id) ?? 1) - 1;
        if (left > 0) open.set(user.id, left);
        else open.delete(user.id);
      }
    }

    async function run(
      socket: WebSocket,
      request: FastifyRequest,
      caller: Caller,
      firstLine: Promise<string | undefined>,
    ): Promise<void> {
      const line = await firstLine;
      if (line === undefined) return;
      const record = async (status: number, outcome: string) =>
        recordTakenOver(ctx, request, status, {
          path: folderOf(request),
          detail: `${line.trim()} (${outcome})`,
        });
      // The command line may come long after the upgrade: it runs as its caller is now, and not
      // at all once the session or token behind the socket ended or execute was withdrawn.
      let user: StoredUser;
      try {
        user = await caller.now();
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await record(err.status, err.message);
        send(socket, `Command not allowed: ${err.message}.`);
        close(socket, CLOSE.policy);
        return;
      }

      let prepared;
      try {
        prepared = await prepareCommand(ctx, user, folderOf(request), line);
      } catch (err) {
        if (err instanceof CommandRefused) {
          await record(403, err.message);
          send(socket, err.message);
          close(socket, CLOSE.policy);
          return;
        }
        throw err;
      }
      if (socket.readyState !== socket.OPEN) {
        await prepared.cancel();
        return;
      }

      request.log.info(
        {
          user: user.username,
          command: prepared.words,
          cwd: prepared.workingFolder,
          sandbox: prepared.sandboxed,
        },
        'running a command',
      );
      let proc: RunningProcess;
      try {
        proc = startProcess(prepared, (text) => send(socket, text));
      } catch (err) {
        await prepared.cancel();
        throw err;
      }
      // Listen before any await: a socket closed while the pin is released would otherwise leave
      // the command running to its time limit, holding one of the user's few command slots.
      const stop = () => proc.stop();
      socket.once('close', stop);
      if (socket.readyState !== socket.OPEN) stop();
      const withdrawn = watchCaller(caller, proc, request);
      // The child is in its working folder once spawn returns: the pin has done its work.
      await prepared.release();
      // Resolves once the quota counts were walked again (what a command writes is not seen
      // byte by byte) and the room lent to it is free: see prepareCommand.
      const result = await proc.done;
      socket.off('close', stop);
      withdrawn.end();

      const what = describeResult(result, prepared);
      await record(succeeded(result) ? 200 : result.outcome === 'revoked' ? 403 : 500, what);
      if (succeeded(result)) return close(socket, CLOSE.normal, what);
      if (result.outcome === 'stopped') return;
      if (result.outcome === 'revoked') {
        send(socket, `Command stopped: ${withdrawn.reason()}.`);
        return close(socket, CLOSE.policy, what);
      }
      if (result.outcome === 'time-limit' || result.outcome === 'output-limit') {
        send(socket, `Command stopped: ${what}.`);
      } else if (result.outcome === 'quota-limit') {
        send(socket, 'Command stopped: your scope passed its quota.');
      } else if (result.signal === 'SIGXFSZ' && prepared.fileSizeLimit !== undefined) {
        send(
          socket,
          `Command stopped: a file it wrote reached ${formatBytes(prepared.fileSizeLimit)}, the room left by your quota or on the disk.`,
        );
      } else if (result.outcome === 'start-failed') {
        request.log.warn({ err: result.error }, 'command could not start');
        send(socket, 'Command could not start.');
      }
      close(socket, CLOSE.failure, what);
    }

    for (const url of ['/api/command', '/api/command/*']) {
      app.get(
        url,
        {
          websocket: true,
          onRequest: requireSameOrigin,
          // Recorded by the handler once the command has run (or was refused): see recordTakenOver.
          // A command's program reads what it likes: no read-only or folder token runs one.
          config: { reach: ACCOUNT_CHANGES, audit: 'command.run' },
          schema: {
            summary: 'run a command of the user’s list: a WebSocket; the first message is the command line',
            tags: ['command'],
            ...(url.endsWith('*') && { params: PathParams }),
            response: { 101: empty('switched to the WebSocket protocol; text messages both ways') },
          },
        },
        async (socket, request) => {
          try {
            await handle(socket, request);
          } catch (err) {
            request.log.error({ err }, 'command failed');
            close(socket, CLOSE.failure, 'Internal Server Error');
          }
        },
      );
    }
  };
}
