import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { InjectOptions } from 'fastify';

/**
 * What the attack catalogue's tests share: a marker for private content, requests over real HTTP,
 * and an inventory of a folder.
 */

export const MARK = 'TOPSECRET';

export interface Answer {
  statusCode: number;
  body: string;
  rawPayload: Buffer;
}

/**
 * Sends a request over a real socket with its path exactly as given: an injected request (like a
 * browser) would resolve `..` before the server sees it, an attacker's client does not.
 */
export function send(port: number, token: string | undefined, opts: InjectOptions): Promise<Answer> {
  const payload =
    opts.payload === undefined
      ? undefined
      : typeof opts.payload === 'string'
        ? opts.payload
        : JSON.stringify(opts.payload);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: opts.method,
        path: String(opts.url),
        headers: {
          ...(token && { 'x-auth': token }),
          ...(payload !== undefined &&
            typeof opts.payload !== 'string' && { 'content-type': 'application/json' }),
          ...(opts.headers as Record<string, string>),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const rawPayload = Buffer.concat(chunks);
          resolve({ statusCode: res.statusCode ?? 0, rawPayload, body: rawPayload.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Everything below `dir`, names and contents, to prove that nothing there changed. */
export async function inventory(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(e.parentPath, e.name);
    const st = await fs.lstat(full);
    out[path.relative(dir, full)] = st.isFile()
      ? await fs.readFile(full, 'utf8')
      : st.isSymbolicLink()
        ? `-> ${await fs.readlink(full)}`
        : 'dir';
  }
  return out;
}
