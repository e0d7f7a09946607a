import type http from 'node:http';
import type https from 'node:https';
import type net from 'node:net';
import tls from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { addressKey, trustedAddresses } from '../auth/ip.js';
import type { Logger } from '../context.js';

/**
 * The life of a connection, for every server the process listens with (Fastify's own, and the
 * HTTPS server of `--cert`): how many there may be, how long each may sit idle, and how one that
 * was answered before its request's body was read ends so that its client reads the answer.
 */

export interface ConnectionLimits {
  /** Connections open at once, in all. */
  maxConnections: number;
  /** Connections open at once from one client address (an IPv6 /64 counts as one). */
  maxConnectionsPerAddress: number;
  /** Seconds a request's headers may take to arrive, from the connection or the request's start. */
  headersTimeout: number;
  /**
   * Seconds a connection may sit with nothing moving while it is the client's turn: before and
   * between requests, while a request's body is expected, while an answer waits for the client
   * to read it. Never while the server itself works on an answer.
   */
  idleTimeout: number;
  /** Proxies (`--trustedProxies`): every client behind one shares its address, so none is capped. */
  trustedProxies: string[];
}

/** Bytes of a request body read and thrown away after an early answer, before the connection is cut. */
export const DRAIN_BYTES = 64 * 1024 * 1024;
/** Longest a connection lingers after an early answer, draining what its client still sends. */
const LINGER_MS = 30_000;

/**
 * Options for creating a server: Node checks the headers timeout on a timer of its own, set when
 * the server is made (every 30 s by default, which would let a 30 s limit become almost 60).
 */
export function serverOptions(limits: Pick<ConnectionLimits, 'headersTimeout'>): http.ServerOptions {
  const headersMs = limits.headersTimeout * 1000;
  return {
    headersTimeout: headersMs,
    requestTimeout: 0,
    connectionsCheckingInterval: Math.min(5000, Math.max(50, Math.round(headersMs / 4))),
  };
}

/** What is known of one open connection. */
interface Connection {
  req?: http.IncomingMessage;
  res?: http.ServerResponse;
  /** Reading and discarding the rest of a body after an early answer. */
  draining: boolean;
  /** The answer was the connection's last (`Connection: close`): it closes after the drain. */
  last: boolean;
}

/**
 * Applies the limits to `server`, which the caller made with `serverOptions`:
 * - a new connection past `maxConnections`, or past `maxConnectionsPerAddress` from its address,
 *   is closed at once, before any byte is read; open connections are never touched. Trusted
 *   proxies count only towards the total (their clients are told apart by `X-Forwarded-For`
 *   only once a request arrives);
 * - headers must arrive within `headersTimeout` (Node answers 408 and closes); no timeout bounds
 *   a whole request, so a large body on a slow link is never cut while its bytes keep coming;
 *   `idleTimeout` closes a connection on which nothing moves while the client should act;
 * - an answer given before its request's body was read (a refusal: 401, 403, 409, 413, 507…)
 *   reaches its client: the server goes on reading and discarding what the client still sends,
 *   up to `DRAIN_BYTES` and `LINGER_MS`, and only then closes; closing a socket with unread
 *   bytes makes the kernel reset the connection, and a reset makes the client's kernel drop the
 *   answer it had not read yet ("other side closed").
 */
export function guardConnections(
  server: http.Server | https.Server,
  limits: ConnectionLimits,
  log: Pick<Logger, 'warn'>,
): void {
  const idleMs = limits.idleTimeout * 1000;
  server.headersTimeout = limits.headersTimeout * 1000;
  server.requestTimeout = 0;
  server.keepAliveTimeout = idleMs;
  server.setTimeout(idleMs);

  const isTrusted = trustedAddresses(limits.trustedProxies);
  const perAddress = new Map<string, number>();
  const connections = new WeakMap<net.Socket, Connection>();
  let open = 0;
  /** Refusals already logged (once until the count falls below the cap again). */
  const warned = new Set<string>();
  const refuse = (socket: net.Socket, key: string, message: string) => {
    if (!warned.has(key)) {
      warned.add(key);
      log.warn({ event: 'connection_refused', address: socket.remoteAddress }, message);
    }
    socket.destroy();
  };

  // Counted on the TCP connection, before anything is read (for HTTPS, before the handshake).
  server.prependListener('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress;
    const key = address && !isTrusted(address) ? addressKey(address) : undefined;
    if (open >= limits.maxConnections) {
      return refuse(socket, '', `${open} connections are open, the most allowed (--maxConnections)`);
    }
    const mine = key === undefined ? 0 : (perAddress.get(key) ?? 0);
    if (key !== undefined && mine >= limits.maxConnectionsPerAddress) {
      return refuse(
        socket,
        key,
        `${mine} connections are open from ${key}, the most allowed from one address (--maxConnectionsPerAddress)`,
      );
    }
    open++;
    if (key !== undefined) perAddress.set(key, mine + 1);
    socket.once('close', () => {
      open--;
      warned.delete('');
      if (key === undefined) return;
      const left = (perAddress.get(key) ?? 1) - 1;
      if (left > 0) perAddress.set(key, left);
      else perAddress.delete(key);
      warned.delete(key);
    });
  });

  // The socket HTTP runs on: the TCP connection, or for HTTPS the TLS socket over it.
  const httpSocket = server instanceof tls.Server ? 'secureConnection' : 'connection';
  server.on(httpSocket, (socket: net.Socket) => {
    if (socket.destroyed) return;
    const conn: Connection = { draining: false, last: false };
    connections.set(socket, conn);
    lingerOnClose(socket, conn);
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const conn = connections.get(req.socket);
    if (!conn) return;
    conn.req = req;
    conn.res = res;
    conn.last = false;
    // Before Node's own 'finish' listener: a body left unread is then already flowing to the
    // drain, which Node takes as the request being read (it would otherwise discard the rest
    // itself, without a bound and without the drain hearing of it).
    res.prependOnceListener('finish', () => {
      if (req.complete === false && !conn.draining) drain(req.socket, conn, req);
    });
  });

  server.on('timeout', (socket: net.Socket) => {
    const conn = connections.get(socket);
    if (conn && serverIsWorking(socket, conn)) {
      // Nothing moved because the server is busy with the answer: wait for another idle stretch.
      socket.setTimeout(idleMs);
      return;
    }
    socket.destroy();
  });
}

/**
 * Whether an idle connection is waiting for the server rather than for its client: an answer is
 * being made, its request's body has all arrived (or what arrived is still waiting to be read),
 * and nothing of the answer waits for the client to read it.
 */
function serverIsWorking(socket: net.Socket, conn: Connection): boolean {
  const { req, res } = conn;
  if (!req || !res || res.writableFinished || conn.draining) return false;
  if (req.complete === false && req.readableLength === 0) return false;
  return socket.writableLength === 0 && !res.writableNeedDrain;
}

/**
 * Node ends a connection after its last answer (`Connection: close`) with `destroySoon`: a FIN
 * after the answer, then the socket is closed, with whatever the client still sends unread.
 * While the request's body is being drained, the connection lingers instead: the FIN goes (the
 * client hears that no more answers come), and the socket closes once the drain is over.
 */
function lingerOnClose(socket: net.Socket, conn: Connection): void {
  const destroySoon = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    if (!conn.draining) return destroySoon();
    conn.last = true;
    socket.end();
  };
}

/**
 * Reads and throws away the rest of a request's body after its answer was given. When the
 * answer was the connection's last, the socket closes once the body has all been read;
 * otherwise the connection goes on to the client's next request. Past `DRAIN_BYTES` or
 * `LINGER_MS` it is cut; an idle client is cut by the idle timeout.
 */
function drain(socket: net.Socket, conn: Connection, req: http.IncomingMessage): void {
  conn.draining = true;
  if (req.destroyed) return void socket.destroy();
  let drained = 0;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // A reader that stopped early may have left its listener; the body now only flows away.
  req.removeAllListeners('readable');
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_BYTES) socket.destroy();
  });
  req.once('end', () => {
    clearTimeout(timer);
    if (conn.last) socket.destroy();
    else conn.draining = false;
  });
  req.resume();
}

/**
 * Marks an answer given before the request's body was read as the connection's last
 * (`Connection: close`): the client stops sending and does not reuse the connection, and
 * `guardConnections` drains what was already on its way. Fastify's own refusals of a body (413)
 * say so too; this covers every other route and refusal. Requests made with `inject` have no
 * connection and no `complete` flag.
 */
export function closeAfterEarlyAnswers(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.raw.complete === false) void reply.header('connection', 'close');
    return payload;
  });
}
