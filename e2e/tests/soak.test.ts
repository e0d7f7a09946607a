import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStagingName } from '../../packages/server/src/files/access/staging-names.js';
import { ADMIN, startServer, type RunningServer } from '../support/server.js';

// The concurrency soak: 20 clients for 30 s (FB_SOAK_SECONDS to change it) upload, rename, copy
// and delete in the same three folders. It asserts what must hold however the requests
// interleave and however fast the machine is: no 5xx, every completed upload reads back intact,
// no file is ever torn, and nothing is left behind. The figures of speed live in `npm run load`.

const CLIENTS = 20;
const SECONDS = Number(process.env.FB_SOAK_SECONDS || 30);
const FOLDERS = ['a', 'b', 'c'];
/** Statuses a client may get because another client got there first. */
const RACE_LOST = new Set([404, 409]);

let server: RunningServer;
let token: string;

beforeAll(async () => {
  server = await startServer();
  for (const f of FOLDERS) await fs.mkdir(path.join(server.root, f));
  const res = await fetch(`${server.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  token = await res.text();
});

afterAll(async () => {
  await server?.stop();
});

/** A file that carries its own checksum, so that any copy of it anywhere can be checked. */
function sealed(size: number): Buffer {
  const payload = crypto.randomBytes(size);
  const digest = crypto.createHash('sha256').update(payload).digest('hex');
  return Buffer.concat([Buffer.from(`SOAK ${digest}\n`), payload]);
}

function isIntact(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 70).toString('latin1');
  const m = /^SOAK ([0-9a-f]{64})\n/.exec(head);
  if (!m) return false;
  return crypto.createHash('sha256').update(bytes.subarray(m[0].length)).digest('hex') === m[1];
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const url = (p: string) => `${server.url}${p.split('/').map(encodeURIComponent).join('/')}`;

interface Tally {
  ops: Record<string, number>;
  /** Every answer outside what the operation may get, with what was asked. */
  unexpected: string[];
  verified: number;
}

async function call(
  tally: Tally,
  op: string,
  allowed: number[],
  href: string,
  init: RequestInit = {},
): Promise<Response> {
  const res = await fetch(href, { ...init, headers: { 'X-Auth': token, ...init.headers } });
  tally.ops[op] = (tally.ops[op] ?? 0) + 1;
  if (!allowed.includes(res.status) && !RACE_LOST.has(res.status)) {
    tally.unexpected.push(
      `${op} ${init.method ?? 'GET'} ${href} → ${res.status} ${await res.clone().text()}`,
    );
  }
  return res;
}

async function someFile(tally: Tally, folder: string): Promise<string | null> {
  const res = await call(tally, 'list', [200], url(`/api/resources/${folder}/`));
  if (res.status !== 200) return null;
  const body = (await res.json()) as { items?: { name: string; isDir: boolean }[] };
  const files = (body.items ?? []).filter((i) => !i.isDir);
  return files.length ? `${folder}/${pick(files).name}` : null;
}

/** Reads a file that was just written; it may be gone already, but if it is there it is whole. */
async function readBack(tally: Tally, relative: string, expected: Buffer): Promise<void> {
  const res = await call(tally, 'read', [200], url(`/api/raw/${relative}`));
  if (res.status !== 200) return;
  const bytes = Buffer.from(await res.arrayBuffer());
  if (!isIntact(bytes)) tally.unexpected.push(`read ${relative}: torn content (${bytes.length} bytes)`);
  else if (bytes.equals(expected)) tally.verified++;
}

async function client(id: number, deadline: number, tally: Tally): Promise<void> {
  let n = 0;
  while (Date.now() < deadline) {
    const folder = pick(FOLDERS);
    const name = `c${id}-${n++}.bin`;
    const choice = Math.random();
    if (choice < 0.3) {
      const body = sealed(1024 + Math.floor(Math.random() * 256 * 1024));
      const res = await call(
        tally,
        'upload',
        [200],
        url(`/api/resources/${folder}/${name}`) + '?override=true',
        {
          method: 'POST',
          body: new Uint8Array(body),
        },
      );
      if (res.status === 200) await readBack(tally, `${folder}/${name}`, body);
    } else if (choice < 0.45) {
      const body = sealed(64 * 1024 + Math.floor(Math.random() * 64 * 1024));
      const href = url(`/api/tus/${folder}/${name}`) + '?override=false';
      const tus = { 'tus-resumable': '1.0.0' };
      const created = await call(tally, 'tus-create', [201], href, {
        method: 'POST',
        headers: { ...tus, 'upload-length': String(body.length) },
      });
      if (created.status !== 201) continue;
      const half = Math.floor(body.length / 2);
      let complete = true;
      for (const [from, to] of [
        [0, half],
        [half, body.length],
      ]) {
        const res = await call(tally, 'tus-patch', [204], href, {
          method: 'PATCH',
          headers: {
            ...tus,
            'upload-offset': String(from),
            'content-type': 'application/offset+octet-stream',
          },
          body: new Uint8Array(body.subarray(from, to)),
        });
        if (res.status !== 204) {
          complete = false;
          break;
        }
      }
      if (complete) await readBack(tally, `${folder}/${name}`, body);
    } else if (choice < 0.85) {
      const source = await someFile(tally, folder);
      if (!source) continue;
      const action = choice < 0.65 ? 'rename' : 'copy';
      const destination = `/${pick(FOLDERS)}/${action[0]}${id}-${n}.bin`;
      await call(
        tally,
        action,
        [200, 204],
        url(`/api/resources/${source}`) +
          `?action=${action}&destination=${encodeURIComponent(destination)}&override=false`,
        { method: 'PATCH' },
      );
    } else {
      const source = await someFile(tally, folder);
      if (!source) continue;
      await call(tally, 'delete', [200, 204], url(`/api/resources/${source}`), { method: 'DELETE' });
    }
  }
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(full)));
    else out.push(full);
  }
  return out;
}

describe(`concurrency soak: ${CLIENTS} clients × ${SECONDS} s in overlapping folders`, () => {
  it(
    'answers no 5xx, reads back every completed upload whole, tears no file and leaves no debris',
    async () => {
      const tally: Tally = { ops: {}, unexpected: [], verified: 0 };
      const deadline = Date.now() + SECONDS * 1000;
      await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i, deadline, tally)));

      console.log(`soak: ${JSON.stringify(tally.ops)}; ${tally.verified} uploads read back intact`);
      expect(tally.unexpected).toEqual([]);
      // each kind of work really happened, so a broken route cannot pass as "nothing to check"
      for (const op of ['upload', 'tus-patch', 'rename', 'copy', 'delete']) {
        expect(tally.ops[op] ?? 0, op).toBeGreaterThan(0);
      }
      expect(tally.verified).toBeGreaterThan(0);

      const files = await walk(server.root);
      const debris = files.filter((f) => isStagingName(path.basename(f)));
      expect(debris).toEqual([]);
      for (const f of files.filter((f) =>
        FOLDERS.some((d) => f.startsWith(path.join(server.root, d) + path.sep)),
      )) {
        expect(isIntact(await fs.readFile(f)), f).toBe(true);
      }
      expect(await server.ctx.store.staging.orphaned([])).toEqual([]);
      expect(await server.ctx.store.uploads.all()).toEqual([]);
    },
    SECONDS * 1000 + 300_000,
  );
});
