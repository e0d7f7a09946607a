import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FileInfo, Permissions } from '@filebrowser/contract';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * The permission matrix of contract 1.7, endpoint by endpoint: every permission is turned off in
 * turn, and each endpoint of the Files API must answer its success status exactly when the
 * permissions it needs are all on, and otherwise 403 (or File Browser's 202 for download).
 * Administrators always hold every permission here (accounts.ts), so the rows that turn one
 * permission off are non-administrators; the first row is an administrator.
 */

type Perm = keyof Permissions;
const PERMS: Perm[] = ['admin', 'execute', 'create', 'rename', 'modify', 'delete', 'share', 'download'];
const FULL: Permissions = {
  admin: true,
  execute: true,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};

interface Case {
  name: string;
  needs: Perm[];
  ok: number;
  /** The answer when a needed permission is off: 403, or 202 where File Browser said so. */
  denied: 202 | 403;
  request: InjectOptions;
  /** Work to do before the request (as the user, whose id is given). */
  setup?: (userId: number) => Promise<void>;
  /** More checks on a successful answer. */
  check?: (res: LightMyRequestResponse, on: (p: Perm) => boolean) => void;
}

let t: FilesApp;
let home: string;
let png: Buffer;
const TUS = { 'tus-resumable': '1.0.0' };

/** Registers a pending upload of `userId`, as a tus POST by that user would have. */
async function pendingUpload(userId: number, virtual: string, length: number): Promise<void> {
  const dir = path.join(path.dirname(t.ctx.config.database), 'uploads');
  await fs.mkdir(dir, { recursive: true });
  const id = crypto.randomBytes(8).toString('hex');
  const staging = path.join(dir, `${id}.part`);
  await fs.writeFile(staging, '');
  await t.ctx.store.uploads.put({ id, userId, path: virtual, length, override: false, staging });
}

const CASES: Case[] = [
  {
    name: 'list a folder',
    needs: [],
    ok: 200,
    denied: 403,
    request: { method: 'GET', url: '/api/resources/dir/' },
  },
  {
    name: 'file info (content only with download)',
    needs: [],
    ok: 200,
    denied: 403,
    request: { method: 'GET', url: '/api/resources/dir/a.txt' },
    check: (res, on) => {
      const info = JSON.parse(res.body) as FileInfo;
      expect(info.content).toBe(on('download') ? 'alpha' : undefined);
      expect(info.type).toBe(on('modify') ? 'text' : 'textImmutable');
    },
  },
  {
    name: 'checksum',
    needs: ['download'],
    ok: 200,
    denied: 202,
    request: { method: 'GET', url: '/api/resources/dir/a.txt?checksum=sha256' },
  },
  {
    name: 'X-Encoding',
    needs: ['download'],
    ok: 200,
    denied: 202,
    request: { method: 'GET', url: '/api/resources/dir/a.txt', headers: { 'x-encoding': 'true' } },
    // Raw bytes for `text` only; `textImmutable` (no modify) gets the JSON answer (contract 5.1).
    check: (res, on) =>
      on('modify')
        ? expect(res.body).toBe('alpha')
        : expect((JSON.parse(res.body) as FileInfo).type).toBe('textImmutable'),
  },
  {
    name: 'recursive listing',
    needs: [],
    ok: 200,
    denied: 403,
    request: { method: 'GET', url: '/api/resources/recursive/dir' },
  },
  { name: 'usage', needs: [], ok: 200, denied: 403, request: { method: 'GET', url: '/api/usage/dir' } },
  {
    name: 'search',
    needs: [],
    ok: 200,
    denied: 403,
    request: { method: 'GET', url: '/api/search/?query=a' },
    check: (res) => expect(res.body).toContain('"path":"dir/a.txt"'),
  },
  {
    name: 'raw download',
    needs: ['download'],
    ok: 200,
    denied: 202,
    request: { method: 'GET', url: '/api/raw/dir/a.txt' },
  },
  {
    name: 'archive download',
    needs: ['download'],
    ok: 200,
    denied: 202,
    request: { method: 'GET', url: '/api/raw/dir?algo=tar' },
  },
  {
    name: 'preview',
    needs: ['download'],
    ok: 200,
    denied: 202,
    request: { method: 'GET', url: '/api/preview/thumb/dir/p.png?inline=true' },
  },
  {
    name: 'subtitle',
    needs: ['download'],
    ok: 200,
    denied: 202,
    request: { method: 'GET', url: '/api/subtitle/dir/s.srt' },
  },
  {
    name: 'create a file',
    needs: ['create'],
    ok: 200,
    denied: 403,
    request: { method: 'POST', url: '/api/resources/dir/new.txt', payload: 'x' },
  },
  {
    name: 'create a folder',
    needs: ['create'],
    ok: 200,
    denied: 403,
    request: { method: 'POST', url: '/api/resources/dir/newdir/' },
  },
  {
    name: 'replace a file (POST override)',
    needs: ['create', 'modify'],
    ok: 200,
    denied: 403,
    request: { method: 'POST', url: '/api/resources/dir/a.txt?override=true', payload: 'x' },
  },
  {
    name: 'save (PUT)',
    needs: ['modify'],
    ok: 200,
    denied: 403,
    request: { method: 'PUT', url: '/api/resources/dir/a.txt', payload: 'x' },
  },
  {
    name: 'delete',
    needs: ['delete'],
    ok: 204,
    denied: 403,
    request: { method: 'DELETE', url: '/api/resources/dir/a.txt' },
  },
  {
    // Unlike File Browser, a copy reads the source: download too (docs/api.md).
    name: 'copy',
    needs: ['create', 'download'],
    ok: 200,
    denied: 403,
    request: { method: 'PATCH', url: '/api/resources/dir/a.txt?action=copy&destination=%2Fc.txt' },
  },
  {
    name: 'copy with override',
    needs: ['create', 'download', 'modify'],
    ok: 200,
    denied: 403,
    request: {
      method: 'PATCH',
      url: '/api/resources/dir/a.txt?action=copy&destination=%2Fdir%2Fb.txt&override=true',
    },
  },
  {
    name: 'move',
    needs: ['rename'],
    ok: 200,
    denied: 403,
    request: { method: 'PATCH', url: '/api/resources/dir/a.txt?action=rename&destination=%2Fm.txt' },
  },
  {
    name: 'move with override',
    needs: ['rename', 'modify'],
    ok: 200,
    denied: 403,
    request: {
      method: 'PATCH',
      url: '/api/resources/dir/a.txt?action=rename&destination=%2Fdir%2Fb.txt&override=true',
    },
  },
  {
    name: 'tus create',
    needs: ['create'],
    ok: 201,
    denied: 403,
    request: { method: 'POST', url: '/api/tus/dir/up.bin', headers: { ...TUS, 'upload-length': '3' } },
  },
  {
    name: 'tus create with override',
    needs: ['create', 'modify'],
    ok: 201,
    denied: 403,
    request: {
      method: 'POST',
      url: '/api/tus/dir/a.txt?override=true',
      headers: { ...TUS, 'upload-length': '3' },
    },
  },
  {
    name: 'tus HEAD',
    needs: ['create'],
    ok: 200,
    denied: 403,
    setup: (id) => pendingUpload(id, '/dir/up.bin', 3),
    request: { method: 'HEAD', url: '/api/tus/dir/up.bin', headers: TUS },
  },
  {
    name: 'tus PATCH',
    needs: ['create'],
    ok: 204,
    denied: 403,
    setup: (id) => pendingUpload(id, '/dir/up.bin', 3),
    request: {
      method: 'PATCH',
      url: '/api/tus/dir/up.bin',
      headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      payload: 'abc',
    },
  },
  {
    // Our DELETE removes only the caller's own staging file, so it takes create (docs/api.md).
    name: 'tus DELETE',
    needs: ['create'],
    ok: 204,
    denied: 403,
    setup: (id) => pendingUpload(id, '/dir/up.bin', 3),
    request: { method: 'DELETE', url: '/api/tus/dir/up.bin', headers: TUS },
  },
];

async function resetFixture(): Promise<void> {
  await fs.rm(home, { recursive: true, force: true });
  await fs.mkdir(path.join(home, 'dir'), { recursive: true });
  await fs.writeFile(path.join(home, 'dir/a.txt'), 'alpha');
  await fs.writeFile(path.join(home, 'dir/b.txt'), 'beta');
  await fs.writeFile(path.join(home, 'dir/p.png'), png);
  await fs.writeFile(path.join(home, 'dir/s.srt'), '1\n00:00:01,000 --> 00:00:02,000\nHi\n');
  for (const upload of await t.ctx.store.uploads.all()) await t.ctx.store.uploads.delete(upload.id);
}

beforeAll(async () => {
  t = await startFilesApp({}, { pathEnv: '' });
  home = path.join(t.root, 'shared');
  png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
});
afterAll(async () => {
  await t.close();
});

describe('permission matrix of the Files API', () => {
  it.each(['nothing', ...PERMS] as const)('without %s', async (row) => {
    const off = row === 'nothing' ? undefined : row;
    const name = `user-${off ? `no-${off}` : 'all'}`;
    // Sharing needs download (accounts refuse share without it), so both go together.
    const perm: Permissions =
      off === undefined
        ? FULL
        : { ...FULL, admin: false, [off]: false, ...(off === 'download' && { share: false }) };
    const token = await t.user(name, { scope: '/shared', perm });
    expect((await t.ctx.store.users.getByUsername(name))!.perm).toEqual(perm);
    const id = (await t.ctx.store.users.getByUsername(name))!.id;
    const on = (p: Perm) => perm[p];
    for (const c of CASES) {
      await resetFixture();
      await c.setup?.(id);
      const res = await t.req(token, c.request);
      const allowed = c.needs.every(on);
      const label = `${c.name} ${off ? `without ${off}` : 'with every permission'}`;
      expect(res.statusCode, `${label}: ${res.body.slice(0, 200)}`).toBe(allowed ? c.ok : c.denied);
      if (allowed) c.check?.(res, on);
      else if (c.denied === 202) expect(res.body, label).toBe('202 Accepted\n');
      else if (c.request.method !== 'HEAD') expect(res.body, label).toMatch(/^403 Forbidden/);
    }
  });
});
