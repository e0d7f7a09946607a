import type http from 'node:http';
import type https from 'node:https';
import type net from 'node:net';

/**
 * The open connections of a listening server. Kept so that a shutdown can end those still open
 * when the grace period is over, upgraded ones (WebSockets) included, which the HTTP server no
 * longer counts as its own but which still keep it from closing.
 */
export class Connections {
  private readonly open = new Set<net.Socket>();
  private stopping = false;

  constructor(private readonly server: http.Server | https.Server) {
    server.on('connection', (socket: net.Socket) => {
      this.open.add(socket);
      socket.once('close', () => this.open.delete(socket));
    });
    server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      // Once stopping, a connection whose request is done is not kept alive for another: the
      // server closes idle connections only when asked, and a keep-alive client would otherwise
      // hold the shutdown for the whole grace period.
      res.once('close', () => {
        if (this.stopping) setImmediate(() => this.server.closeIdleConnections());
      });
    });
  }

  get count(): number {
    return this.open.size;
  }

  /** Stops accepting connections; resolves once every open one has ended. */
  stopAccepting(): Promise<void> {
    this.stopping = true;
    const drained = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    return drained;
  }

  /** Ends every connection still open, in the middle of a response or not; answers how many. */
  destroyAll(): number {
    const n = this.open.size;
    for (const socket of this.open) socket.destroy();
    return n;
  }
}

export interface ShutdownSteps {
  connections: Connections;
  /** Closes the application (its own close hooks); resolves when its server has closed too. */
  closeApp(): Promise<void>;
  closeStore(): Promise<void> | void;
  graceSeconds: number;
  /** One line for the console (the log may be off). */
  say(line: string): void;
}

/**
 * A graceful stop: no new connection is accepted, requests in flight (downloads and uploads)
 * get `graceSeconds` to finish, then whatever is still open is cut, and the database is closed
 * last, so that no request still running finds it closed while it may still finish.
 */
export async function shutDown(steps: ShutdownSteps): Promise<void> {
  const { connections, graceSeconds, say } = steps;
  const drained = connections.stopAccepting();
  // From here on, a request arriving on a kept-alive connection is answered 503 by Fastify.
  const appClosed = steps.closeApp();
  const open = connections.count;
  say(
    `Stopped accepting connections; ${open === 0 ? 'none is open' : `waiting up to ${graceSeconds} s for ${open} open connection${open === 1 ? '' : 's'} to finish`}.\n`,
  );
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'grace over'>((resolve) => {
    timer = setTimeout(() => resolve('grace over'), graceSeconds * 1000);
  });
  const first = await Promise.race([drained.then(() => 'drained' as const), graceOver]);
  clearTimeout(timer);
  if (first === 'grace over') {
    const cut = connections.destroyAll();
    say(
      `The grace period of ${graceSeconds} s is over: closed ${cut} connection${cut === 1 ? '' : 's'} still open.\n`,
    );
    await drained;
  }
  await appClosed;
  await steps.closeStore();
  say('Closed the database.\n');
}
