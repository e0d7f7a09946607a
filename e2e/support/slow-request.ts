import http from 'node:http';
import type net from 'node:net';

/** An answer with its body read whole. */
export interface CollectedAnswer {
  status: number;
  body: string;
}

/** A request whose body the test sends itself, piece by piece. */
export interface SlowRequest {
  req: http.ClientRequest;
  /** Sends part of the body; resolves once it is written. */
  send(bytes: Buffer): Promise<void>;
  /** Sends the last part of the body and answers the answer. */
  end(bytes: Buffer): Promise<CollectedAnswer>;
  /**
   * The answer, if it ever comes. A cut request rejects it, and tests that cut requests on purpose
   * (a killed or stopping server) never look: that rejection is not reported as unhandled.
   */
  answer: Promise<CollectedAnswer>;
}

export interface SlowRequestOptions {
  port: number;
  /** The session token sent as X-Auth. */
  token: string;
  method: string;
  path: string;
  /** The Content-Length announced; the test decides when the bytes come. */
  length: number;
  headers?: Record<string, string>;
  /** Where the request's socket goes, for the test to destroy after it. */
  sockets: net.Socket[];
}

/** Starts a request with a binary body of `length` bytes, of which it sends nothing yet. */
export function slowRequest(opts: SlowRequestOptions): SlowRequest {
  const req = http.request({
    host: '127.0.0.1',
    port: opts.port,
    method: opts.method,
    path: opts.path,
    agent: false,
    headers: {
      'content-length': String(opts.length),
      'content-type': 'application/octet-stream',
      'x-auth': opts.token,
      ...opts.headers,
    },
  });
  req.on('socket', (socket) => opts.sockets.push(socket));
  const answer = new Promise<CollectedAnswer>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  return {
    req,
    send: (bytes) => new Promise<void>((resolve) => req.write(bytes, () => resolve())),
    end: (bytes) => {
      req.end(bytes);
      return answer;
    },
    answer,
  };
}
