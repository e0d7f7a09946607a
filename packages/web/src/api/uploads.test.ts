import http from 'node:http';
import type * as tus from 'tus-js-client';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, connectSession } from './client';

// Vitest runs in Node, where the package resolves to its Node build (http module, Buffers); the
// app is built with its browser build (XHR, Blob slices), which happy-dom can run: use that.
vi.mock('tus-js-client', async () => {
  // @ts-expect-error: the package types its entry point, not this file (the same API).
  const browserBuild: unknown = await import('tus-js-client/lib.esm/browser/index.js');
  return browserBuild as typeof tus;
});
import {
  canUseTus,
  CONNECTION_ABORTED_MESSAGE,
  TUS_SETTINGS_MISSING,
  uploadFile,
  type UploadFileOptions,
} from './uploads';

/**
 * A stand-in HTTP server on a loopback port with the answers of contract 5.3 and 13, so that the
 * client's real XHR and tus-js-client requests go over the network and their answers are mapped
 * the way the spec says. (The real server with the real client runs in e2e/tests/uploads.test.ts.)
 */
interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  body: string;
  headers: http.IncomingHttpHeaders;
}
let seen: Seen[] = [];
let answer: (request: Seen, response: http.ServerResponse) => void = (_, response) => response.end();
let server: http.Server;

const session = {
  token: vi.fn<() => string | null>(() => 'the.token.here'),
  settled: vi.fn(() => Promise.resolve()),
  onRenewRequested: vi.fn(),
  onUnauthorized: vi.fn(),
};

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        auth: request.headers['x-auth'] as string | undefined,
        body: Buffer.concat(chunks).toString(),
        headers: request.headers,
      };
      seen.push(entry);
      answer(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(
    `http://127.0.0.1:${port}/files/`,
  );
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
  connectSession(session);
});
afterEach(() => vi.clearAllMocks());

const options = (overrides: Partial<UploadFileOptions> = {}): UploadFileOptions => ({
  override: false,
  tusSettings: { chunkSize: 4, retryCount: 0 },
  onProgress: () => undefined,
  ...overrides,
});

const text =
  (status: number, body: string, headers: Record<string, string> = {}) =>
  (_: Seen, response: http.ServerResponse) => {
    response.writeHead(status, { 'content-type': 'text/plain', ...headers });
    response.end(body);
  };

describe('choosing the transport', () => {
  it('uses tus for blobs on http(s) pages only', () => {
    const blob = new Blob(['x']);
    expect(canUseTus(blob, 'http:')).toBe(true);
    expect(canUseTus(blob, 'https:')).toBe(true);
    expect(canUseTus(blob, 'file:')).toBe(false);
    expect(canUseTus('text', 'https:')).toBe(false);
  });
});

describe('plain POST uploads', () => {
  const post = (path: string, content: Blob | string, overrides: Partial<UploadFileOptions> = {}) =>
    uploadFile(path, content, options({ protocol: 'file:', ...overrides })).done;

  it('sends the content with the token and the override flag', async () => {
    answer = text(200, '200 OK\n');
    await post('/docs/a b.txt', new Blob(['hello']), { override: true });
    expect(seen).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: '/api/resources/docs/a%20b.txt?override=true',
        auth: 'the.token.here',
        body: 'hello',
      }),
    ]);
  });

  it('rejects a 409 with its status', async () => {
    answer = text(409, '409 Conflict\n');
    const error = await post('/a.txt', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, message: '409 Conflict' });
  });

  it('rejects other answers with the response text', async () => {
    answer = text(500, '500 Internal Server Error\n');
    await expect(post('/a.txt', 'x')).rejects.toMatchObject({
      status: 500,
      message: '500 Internal Server Error',
    });
  });

  it('says the connection was aborted when it breaks', async () => {
    answer = (_, response) => response.socket?.destroy();
    await expect(post('/a.txt', 'x')).rejects.toMatchObject({
      status: 0,
      message: CONNECTION_ABORTED_MESSAGE,
    });
  });

  it('ends the session on a 401 and renews when asked', async () => {
    answer = text(401, '401 Unauthorized\n');
    await expect(post('/a.txt', 'x')).rejects.toMatchObject({ status: 401 });
    expect(session.onUnauthorized).toHaveBeenCalledTimes(1);
    answer = text(200, '200 OK\n', { 'X-Renew-Token': 'true' });
    await post('/a.txt', 'x');
    expect(session.onRenewRequested).toHaveBeenCalledTimes(1);
  });
});

describe('tus uploads', () => {
  /** A minimal tus server: creation, offset and appends, with `patch` deciding each PATCH's fate. */
  function tusServer(patch: (request: Seen, response: http.ServerResponse) => boolean = () => true) {
    let length = 0;
    let data = '';
    const server = {
      get data() {
        return data;
      },
    };
    answer = (request, response) => {
      if (request.method === 'POST') {
        length = Number(request.headers['upload-length']);
        data = '';
        response.writeHead(201, { Location: request.url.split('?')[0]! });
        response.end('201 Created\n');
      } else if (request.method === 'HEAD') {
        response.writeHead(200, { 'Upload-Offset': String(data.length), 'Upload-Length': String(length) });
        response.end();
      } else if (request.method === 'PATCH') {
        if (!patch(request, response)) return;
        data += request.body;
        response.writeHead(204, { 'Upload-Offset': String(data.length) });
        response.end();
      } else {
        response.writeHead(204);
        response.end();
      }
    };
    return server;
  }

  it('creates the upload at the target path, then sends it in chunks with the token', async () => {
    const remote = tusServer();
    const progress: number[] = [];
    await uploadFile(
      '/docs/a b.txt',
      new Blob(['0123456789']),
      options({ onProgress: (n) => progress.push(n) }),
    ).done;
    expect(remote.data).toBe('0123456789');
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /api/tus/docs/a%20b.txt?override=false',
      'HEAD /api/tus/docs/a%20b.txt',
      'PATCH /api/tus/docs/a%20b.txt',
      'PATCH /api/tus/docs/a%20b.txt',
      'PATCH /api/tus/docs/a%20b.txt',
    ]);
    expect(seen[0]!.headers['upload-length']).toBe('10');
    expect(seen.every((r) => r.auth === 'the.token.here')).toBe(true);
    expect(seen.slice(2).map((r) => r.body)).toEqual(['0123', '4567', '89']);
    expect(progress.at(-1)).toBe(10);
  });

  it('needs the tus settings', async () => {
    await expect(uploadFile('/a.txt', new Blob(['x']), options({ tusSettings: null })).done).rejects.toThrow(
      TUS_SETTINGS_MISSING,
    );
    expect(seen).toEqual([]);
  });

  it('reports a refused creation with its status and text', async () => {
    answer = text(409, '409 Conflict (a file with this name exists)\n');
    await expect(uploadFile('/a.txt', new Blob(['x']), options()).done).rejects.toMatchObject({
      status: 409,
      message: 'Failed to create an upload: 409 Conflict (a file with this name exists)',
    });
  });

  it('does not retry a 409 and says why the upload failed', async () => {
    tusServer((_, response) => {
      response.writeHead(409, { 'content-type': 'text/plain' });
      response.end('409 Conflict (offset mismatch)\n');
      return false;
    });
    await expect(
      uploadFile('/a.txt', new Blob(['abcdef']), options({ tusSettings: { chunkSize: 4, retryCount: 3 } }))
        .done,
    ).rejects.toThrow('Upload failed: 409 Conflict (offset mismatch)');
    expect(seen.filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });

  it('retries a failed chunk after the first delay (0 ms) and resumes from the server offset', async () => {
    let failures = 1;
    const remote = tusServer((_, response) => {
      if (failures-- <= 0) return true;
      response.writeHead(503, { 'content-type': 'text/plain' });
      response.end('503 Service Unavailable\n');
      return false;
    });
    await uploadFile(
      '/a.txt',
      new Blob(['abcdef']),
      options({ tusSettings: { chunkSize: 4, retryCount: 1 } }),
    ).done;
    expect(remote.data).toBe('abcdef');
    expect(seen.map((r) => r.method)).toEqual(['POST', 'HEAD', 'PATCH', 'HEAD', 'PATCH', 'PATCH']);
  });

  it('cancels the upload on the server when aborted', async () => {
    let release: () => void = () => undefined;
    tusServer((_, response) => {
      release = () => {
        response.writeHead(204, { 'Upload-Offset': '4' });
        response.end();
      };
      return false;
    });
    const handle = uploadFile('/a.txt', new Blob(['abcdef']), options());
    await vi.waitFor(() => expect(seen.some((r) => r.method === 'PATCH')).toBe(true));
    handle.abort();
    await expect(handle.done).rejects.toThrow();
    await vi.waitFor(() => expect(seen.at(-1)?.method).toBe('DELETE'));
    expect(seen.at(-1)?.url).toBe('/api/tus/a.txt');
    release();
  });
});
