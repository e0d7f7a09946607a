import { encodePath } from '../utils/paths';
import { apiURL } from './client';

/** Websocket close codes the command endpoint uses (RFC 6455). */
const CLOSE_NORMAL = 1000;
const CLOSE_POLICY = 1008;
const CLOSE_TOO_BIG = 1009;
const CLOSE_FAILURE = 1011;

/** How a command ended, as far as the client can tell. */
export type CommandEnd =
  /** Exit status 0. */
  | { kind: 'success' }
  /** The server refused to run it; its reason came as the last output line. */
  | { kind: 'refused' }
  /** It ran and failed: a non-zero exit status, a signal, the time or output limit. */
  | { kind: 'failed'; reason: string }
  /** The command line was larger than the server reads. */
  | { kind: 'too-long' }
  /** Stopped from this side. */
  | { kind: 'stopped' }
  /** The connection could not be made or broke (session ended, server gone). */
  | { kind: 'disconnected' };

export interface CommandHandlers {
  onLine: (line: string) => void;
  onEnd: (end: CommandEnd) => void;
}

export interface CommandRun {
  /** Closes the socket, which makes the server kill the command's processes. */
  stop: () => void;
}

/** The websocket address of the command endpoint for a folder of the file browser. */
export function commandURL(folder: string, location: Pick<Location, 'protocol' | 'host'> = window.location) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${apiURL(`/api/command${encodePath(folder)}`)}`;
}

/** What a close code of the command endpoint means. */
export function commandEndOf(code: number, reason: string): CommandEnd {
  switch (code) {
    case CLOSE_NORMAL:
      return { kind: 'success' };
    case CLOSE_POLICY:
      return { kind: 'refused' };
    case CLOSE_TOO_BIG:
      return { kind: 'too-long' };
    case CLOSE_FAILURE:
      return { kind: 'failed', reason };
    default:
      return { kind: 'disconnected' };
  }
}

/**
 * Runs one command line in `folder` (a virtual path) over `GET /api/command{folder}`. The browser
 * authenticates the upgrade with the auth cookie, which a websocket request carries like any
 * same-origin request; a token never goes into the address. Output lines arrive one message each;
 * `onEnd` is called exactly once.
 */
export function runCommand(folder: string, line: string, handlers: CommandHandlers): CommandRun {
  let ended = false;
  let stopped = false;
  const end = (result: CommandEnd) => {
    if (ended) return;
    ended = true;
    handlers.onEnd(result);
  };

  let socket: WebSocket;
  try {
    socket = new WebSocket(commandURL(folder));
  } catch {
    queueMicrotask(() => end({ kind: 'disconnected' }));
    return { stop: () => undefined };
  }
  socket.addEventListener('open', () => socket.send(line));
  socket.addEventListener('message', (event: MessageEvent) => {
    if (!ended && typeof event.data === 'string') handlers.onLine(event.data);
  });
  socket.addEventListener('close', (event: CloseEvent) =>
    end(stopped ? { kind: 'stopped' } : commandEndOf(event.code, event.reason)),
  );

  return {
    stop: () => {
      if (ended) return;
      stopped = true;
      socket.close(CLOSE_NORMAL);
      // The close event may take a round trip; the caller is told at once.
      end({ kind: 'stopped' });
    },
  };
}
