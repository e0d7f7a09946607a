import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { availableArchiveFormats } from '../src/http/raw/routes.js';
import { ALL, deny, startFilesApp, type FilesApp } from './files-helpers.js';

let t: FilesApp;
let bob: string;
let home: string;
const big = crypto.randomBytes(200_000);

beforeEach(async () => {
  t = await startFilesApp();
  bob = await t.user('bob');
  home = path.join(t.root, 'bob');
  await fs.mkdir(path.join(home, 'photos/2024'), { recursive: true });
  await fs.writeFile(path.join(home, 'photos/a.jpg'), 'jpeg-a');
  await fs.writeFile(path.join(home, 'photos/b.txt'), 'text-b');
  await fs.writeFile(path.join(home, 'photos/2024/c.bin'), big);
  await fs.writeFile(path.join(home, 'photos/.secret'), 'dot');
  await fs.writeFile(path.join(home, 'page.html'), '<html><script>alert(1)</script></html>');
  await fs.writeFile(path.join(home, 'ünïcode name.txt'), 'u');
  await fs.writeFile(path.join(t.outside, 'secret.txt'), 'SECRET');
});
afterEach(async () => {
  await t.close();
});

describe('GET /api/raw files', () => {
  it('sends a file as an attachment with the safety headers', async () => {
    const res = await t.get(bob, '/api/raw/photos/a.jpg');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('jpeg-a');
    expect(res.headers['content-disposition']).toBe("attachment; filename*=utf-8''a.jpg");
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('private');
    expect(String(res.headers['content-security-policy'])).toContain("script-src 'none';");
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['last-modified']).toBeDefined();
    expect(res.headers.etag).toMatch(/^"[0-9a-f]+"$/);
    expect(res.headers['content-length']).toBe('6');
  });

  it('serves inline with the type by extension, and sandboxes active content', async () => {
    const jpg = await t.get(bob, '/api/raw/photos/a.jpg?inline=true');
    expect(jpg.headers['content-type']).toBe('image/jpeg');
    expect(jpg.headers['content-disposition']).toBe("inline; filename*=utf-8''a.jpg");
    const html = await t.get(bob, '/api/raw/page.html?inline=true');
    expect(String(html.headers['content-security-policy'])).toContain('sandbox');
  });

  it('closes the file after every download, ranges included', async () => {
    await fs.writeFile(path.join(home, 'fd.txt'), 'x'.repeat(100_000));
    const openFiles = () => fsSync.readdirSync('/proc/self/fd').length;
    const before = openFiles();
    for (let i = 0; i < 20; i++) {
      const whole = await t.get(bob, '/api/raw/fd.txt');
      expect(whole.statusCode).toBe(200);
      const part = await t.get(bob, '/api/raw/fd.txt', { range: 'bytes=0-9' });
      expect(part.statusCode).toBe(206);
      const parts = await t.get(bob, '/api/raw/fd.txt', { range: 'bytes=0-9,20-29' });
      expect(parts.statusCode).toBe(206);
    }
    // Closing is asynchronous: give the handles a moment, then none of the 60 may remain.
    await expect.poll(openFiles, { timeout: 2000 }).toBeLessThanOrEqual(before + 2);
  });

  it('encodes file names per RFC 5987', async () => {
    const res = await t.get(bob, `/api/raw/${encodeURIComponent('ünïcode name.txt')}`);
    expect(res.headers['content-disposition']).toBe(
      "attachment; filename*=utf-8''%C3%BCn%C3%AFcode%20name.txt",
    );
  });

  it('answers single and multiple ranges, 416 when unsatisfiable', async () => {
    const one = await t.get(bob, '/api/raw/photos/2024/c.bin', { range: 'bytes=10-19' });
    expect(one.statusCode).toBe(206);
    expect(one.headers['content-range']).toBe(`bytes 10-19/${big.length}`);
    expect(one.rawPayload.equals(big.subarray(10, 20))).toBe(true);
    const suffix = await t.get(bob, '/api/raw/photos/2024/c.bin', { range: 'bytes=-5' });
    expect(suffix.rawPayload.equals(big.subarray(big.length - 5))).toBe(true);
    const multi = await t.get(bob, '/api/raw/photos/2024/c.bin', { range: 'bytes=0-1,100-101' });
    expect(multi.statusCode).toBe(206);
    const type = String(multi.headers['content-type']);
    expect(type).toMatch(/^multipart\/byteranges; boundary=/);
    const boundary = type.split('boundary=')[1]!;
    const body = multi.rawPayload;
    expect(Number(multi.headers['content-length'])).toBe(body.length);
    expect(body.includes(Buffer.from(`Content-Range: bytes 0-1/${big.length}`))).toBe(true);
    expect(
      body.includes(
        Buffer.concat([Buffer.from('\r\n\r\n'), big.subarray(100, 102), Buffer.from(`\r\n--${boundary}--`)]),
      ),
    ).toBe(true);
    const bad = await t.get(bob, '/api/raw/photos/2024/c.bin', { range: `bytes=${big.length}-` });
    expect(bad.statusCode).toBe(416);
    expect(bad.headers['content-range']).toBe(`bytes */${big.length}`);
  });

  it('honours If-Modified-Since, If-None-Match and If-Range', async () => {
    const first = await t.get(bob, '/api/raw/photos/b.txt');
    const lastModified = String(first.headers['last-modified']);
    expect(
      (await t.get(bob, '/api/raw/photos/b.txt', { 'if-modified-since': lastModified })).statusCode,
    ).toBe(304);
    expect(
      (await t.get(bob, '/api/raw/photos/b.txt', { 'if-none-match': String(first.headers.etag) })).statusCode,
    ).toBe(304);
    const stale = await t.get(bob, '/api/raw/photos/b.txt', { range: 'bytes=0-1', 'if-range': '"other"' });
    expect(stale.statusCode).toBe(200);
    const fresh = await t.get(bob, '/api/raw/photos/b.txt', {
      range: 'bytes=0-1',
      'if-range': String(first.headers.etag),
    });
    expect(fresh.statusCode).toBe(206);
  });

  it('answers 202 without download, 404 missing, 403 escaping, 405 for HEAD', async () => {
    const noDl = await t.user('nodl', { scope: '/bob', perm: { ...ALL, download: false, share: false } });
    const accepted = await t.get(noDl, '/api/raw/photos/a.jpg');
    expect(accepted.statusCode).toBe(202);
    expect(accepted.body).toBe('202 Accepted\n');
    expect((await t.get(bob, '/api/raw/none')).statusCode).toBe(404);
    await fs.symlink(path.join(t.outside, 'secret.txt'), path.join(home, 'leak'));
    const leak = await t.get(bob, '/api/raw/leak');
    expect(leak.statusCode).toBe(403);
    expect(leak.body).not.toContain('SECRET');
    expect((await t.req(bob, { method: 'HEAD', url: '/api/raw/photos/a.jpg' })).statusCode).toBe(405);
  });

  it('never opens a named pipe', async () => {
    execFileSync('mkfifo', [path.join(home, 'pipe')]);
    const res = await t.get(bob, '/api/raw/pipe');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(res.headers['content-disposition']).toBe("attachment; filename*=utf-8''pipe");
  });
});

/** Downloads an archive to a temporary file and lists it with the system tool. */
async function download(
  url: string,
  token = bob,
): Promise<{ file: string; name: string; status: number; body: Buffer }> {
  const res = await t.get(token, url);
  const name = /filename\*=utf-8''(.*)$/.exec(String(res.headers['content-disposition']))?.[1] ?? '';
  const file = path.join(t.base, decodeURIComponent(name) || 'archive');
  await fs.writeFile(file, res.rawPayload);
  return { file, name: decodeURIComponent(name), status: res.statusCode, body: res.rawPayload };
}

function tarList(file: string, decompress?: string[]): string[] {
  const data = decompress
    ? execFileSync(decompress[0]!, [...decompress.slice(1), file], { maxBuffer: 1 << 26 })
    : execFileSync('cat', [file], { maxBuffer: 1 << 26 });
  const out = spawnSync('tar', ['-tf', '-'], { input: data });
  expect(out.status).toBe(0);
  return out.stdout.toString().trim().split('\n').sort();
}

const EXPECTED = ['.secret', '2024/', '2024/c.bin', 'a.jpg', 'b.txt'];

/** Whether a program is installed: archives are checked with the system's own tools where they are. */
const installed = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const hasUnzip = installed('unzip');

describe('GET /api/raw archives', () => {
  it('advertises the formats whose encoders exist here', () => {
    const tools: Record<string, string> = { tarbz2: 'bzip2', tarxz: 'xz', tarlz4: 'lz4', tarzst: 'zstd' };
    const expected = ['zip', 'tar', 'targz', 'tarbz2', 'tarxz', 'tarlz4', 'tarsz', 'tarbr', 'tarzst'].filter(
      (f) => !tools[f] || installed(tools[f]),
    );
    expect(availableArchiveFormats()).toEqual(expected);
  });

  it.skipIf(!hasUnzip)('zips a folder, stored, contents at the top level, verified with unzip', async () => {
    const { file, name, status } = await download('/api/raw/photos');
    expect(status).toBe(200);
    expect(name).toBe('photos.zip');
    execFileSync('unzip', ['-tq', file]);
    const listing = execFileSync('unzip', ['-Z1', file]).toString().trim().split('\n').sort();
    expect(listing).toEqual(EXPECTED);
    expect(execFileSync('unzip', ['-p', file, '2024/c.bin'], { maxBuffer: 1 << 24 }).equals(big)).toBe(true);
  });

  it.skipIf(!hasUnzip)('names archives of several items after their folder with a leading _', async () => {
    const { file, name } = await download(
      '/api/raw/?files=' + encodeURIComponent('/photos/a.jpg,/photos/b.txt'),
    );
    expect(name).toBe('_photos.zip');
    expect(execFileSync('unzip', ['-Z1', file]).toString().trim().split('\n').sort()).toEqual([
      'a.jpg',
      'b.txt',
    ]);
    const single = await download('/api/raw/?files=' + encodeURIComponent('/photos/a.jpg'));
    expect(execFileSync('unzip', ['-Z1', single.file]).toString().trim()).toBe('a.jpg');
    const root = await download('/api/raw/?algo=tar');
    expect(root.name).toBe('bob.tar');
  });

  const TARS: [string, string, string[] | undefined][] = [
    ['tar', '.tar', undefined],
    ['targz', '.tar.gz', ['gzip', '-dc']],
    ['tarbz2', '.tar.bz2', ['bzip2', '-dc']],
    ['tarxz', '.tar.xz', ['xz', '-dc']],
    ['tarlz4', '.tar.lz4', ['lz4', '-dc']],
    ['tarzst', '.tar.zst', ['zstd', '-dcq']],
  ];
  for (const [algo, ext, tool] of TARS) {
    it.skipIf(!installed('tar') || (tool && !installed(tool[0]!)))(
      `streams ${algo}, verified with the system tools`,
      async () => {
        const { file, name } = await download(`/api/raw/photos?algo=${algo}`);
        expect(name).toBe('photos' + ext);
        expect(tarList(file, tool)).toEqual(EXPECTED);
        // Member contents survive the round trip.
        const dir = path.join(t.base, `x-${algo}`);
        await fs.mkdir(dir);
        const tar = tool
          ? execFileSync(tool[0]!, [...tool.slice(1), file], { maxBuffer: 1 << 26 })
          : undefined;
        execFileSync('tar', ['-x', '-C', dir, ...(tar ? ['-f', '-'] : ['-f', file])], { input: tar });
        expect((await fs.readFile(path.join(dir, '2024/c.bin'))).equals(big)).toBe(true);
      },
    );
  }

  it('streams tar.br (checked with node:zlib) and tar.sz (snappy framing)', async () => {
    const br = await download('/api/raw/photos?algo=tarbr');
    expect(br.name).toBe('photos.tar.br');
    const tar = zlib.brotliDecompressSync(br.body);
    const out = spawnSync('tar', ['-tf', '-'], { input: tar });
    expect(out.stdout.toString().trim().split('\n').sort()).toEqual(EXPECTED);
    // The member's bytes are in the tar: a 512-byte header, then the content.
    const at = tar.indexOf(big.subarray(0, 64));
    expect(at).toBeGreaterThan(0);
    expect(tar.subarray(at, at + big.length).equals(big)).toBe(true);
    const sz = await download('/api/raw/photos?algo=tarsz');
    expect(sz.name).toBe('photos.tar.sz');
    expect(sz.body.subarray(0, 10).toString('latin1')).toBe('\xff\x06\x00\x00sNaPpY');
  });

  it('answers 400 for an unknown format', async () => {
    const res = await t.get(bob, '/api/raw/photos?algo=rar');
    expect(res.statusCode).toBe(400);
    expect(res.body).toBe('400 Bad Request (format not implemented: rar)\n');
  });

  it.skipIf(!hasUnzip)('applies rules, hidden dotfiles and the scope to every member', async () => {
    await fs.symlink(t.outside, path.join(home, 'photos/out'));
    await fs.symlink(path.join(t.outside, 'secret.txt'), path.join(home, 'photos/leak.txt'));
    await fs.symlink('b.txt', path.join(home, 'photos/inside.txt'));
    const ruled = await t.user('ruled', { scope: '/bob', rules: [deny('/photos/2024')], hideDotfiles: true });
    const { file, body } = await download('/api/raw/photos', ruled);
    expect(execFileSync('unzip', ['-Z1', file]).toString().trim().split('\n').sort()).toEqual([
      'a.jpg',
      'b.txt',
      'inside.txt',
    ]);
    expect(body.includes(Buffer.from('SECRET'))).toBe(false);
  });

  it.skipIf(!hasUnzip)(
    'never puts a path reached through an escaping link into a files= archive',
    async () => {
      await fs.symlink(t.outside, path.join(home, 'out'));
      const mixed = await download(
        '/api/raw/?files=' + encodeURIComponent('/photos/a.jpg,/out/secret.txt,/out'),
      );
      expect(mixed.status).toBe(200);
      expect(execFileSync('unzip', ['-Z1', mixed.file]).toString().trim().split('\n')).toEqual(['a.jpg']);
      expect(mixed.body.includes(Buffer.from('SECRET'))).toBe(false);
      const alone = await t.get(bob, '/api/raw/?files=' + encodeURIComponent('/out/secret.txt'));
      expect(alone.statusCode).toBe(403);
      expect(alone.body).toBe('403 Forbidden\n');
      const viaLink = await t.get(bob, '/api/raw/out?algo=tar');
      expect(viaLink.statusCode).toBe(403);
    },
  );

  it('streams a large archive to a slow client without buffering it', async () => {
    const chunk = crypto.randomBytes(1024 * 1024);
    await fs.mkdir(path.join(home, 'large'));
    for (let i = 0; i < 64; i++) await fs.writeFile(path.join(home, `large/f${i}.bin`), chunk);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const before = process.memoryUsage().rss;
    let peak = before;
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: '/api/raw/large?algo=tar', headers: { 'x-auth': bob } },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.on('data', (d: Buffer) => {
            received += d.length;
            // A slow reader: pause after each chunk.
            res.pause();
            peak = Math.max(peak, process.memoryUsage().rss);
            setTimeout(() => res.resume(), 1);
          });
          res.on('end', () => resolve());
          res.on('error', reject);
        },
      );
      req.on('error', reject);
    });
    expect(received).toBeGreaterThan(64 * 1024 * 1024);
    // The 64 MiB archive never sits in memory.
    expect(peak - before).toBeLessThan(48 * 1024 * 1024);
  }, 60_000);
});
