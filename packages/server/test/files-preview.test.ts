import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { findFfmpeg } from '../src/preview/images.js';
import { PreviewCache } from '../src/preview/cache.js';
import { ALL, deny, startFilesApp, type FilesApp } from './files-helpers.js';

let t: FilesApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const ffmpeg = await findFfmpeg(process.env.PATH ?? '');
const RED = { r: 255, g: 0, b: 0 };
const BLUE = { r: 0, g: 0, b: 255 };

/** A JPEG whose left half is red and right half blue, with an EXIF orientation. */
async function halves(width: number, height: number, orientation = 1): Promise<Buffer> {
  const half = Math.floor(width / 2);
  const left = await sharp({ create: { width: half, height, channels: 3, background: RED } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, background: BLUE } })
    .composite([{ input: left, left: 0, top: 0 }])
    .jpeg({ quality: 95 })
    .withMetadata({ orientation })
    .toBuffer();
}

async function pixel(image: Buffer, x: number, y: number): Promise<{ r: number; g: number; b: number }> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * info.channels;
  return { r: data[i]!, g: data[i + 1]!, b: data[i + 2]! };
}

const isRed = (p: { r: number; g: number; b: number }) => p.r > 200 && p.g < 60 && p.b < 60;
const isBlue = (p: { r: number; g: number; b: number }) => p.b > 200 && p.r < 60 && p.g < 60;

interface Setup {
  bob: string;
  home: string;
}

async function start(...args: Parameters<typeof startFilesApp>): Promise<Setup> {
  const [overrides = {}, build = {}] = args;
  // No ffmpeg unless a test asks for one, whatever the machine has.
  t = await startFilesApp(overrides, { pathEnv: '', ...build });
  const bob = await t.user('bob');
  const home = path.join(t.root, 'bob');
  await fs.mkdir(path.join(home, 'pics/deep'), { recursive: true });
  await fs.writeFile(path.join(home, 'pics/rotated.jpg'), await halves(800, 600, 6));
  await fs.writeFile(
    path.join(home, 'pics/wide.png'),
    await sharp({ create: { width: 2000, height: 1000, channels: 3, background: RED } })
      .png()
      .toBuffer(),
  );
  await fs.writeFile(
    path.join(home, 'pics/clear.png'),
    await sharp({ create: { width: 1600, height: 1600, channels: 4, background: { ...RED, alpha: 0.5 } } })
      .png()
      .toBuffer(),
  );
  await fs.writeFile(path.join(home, 'pics/deep/small.jpg'), await halves(64, 64));
  await fs.writeFile(
    path.join(home, 'pics/anim.gif'),
    await sharp({ create: { width: 600, height: 600, channels: 3, background: BLUE } })
      .gif()
      .toBuffer(),
  );
  await fs.writeFile(
    path.join(home, 'pics/icon.svg'),
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
  );
  await fs.writeFile(path.join(home, 'pics/broken.jpg'), 'this is not a jpeg');
  await fs.writeFile(path.join(home, 'notes.txt'), 'hello');
  await fs.writeFile(path.join(home, 'movie.mp4'), 'not really a video');
  await fs.writeFile(path.join(t.outside, 'secret.jpg'), await halves(64, 64));
  return { bob, home };
}

describe('GET /api/preview', () => {
  it('makes 256×256 JPEG thumbnails, labelled image/jpeg, with EXIF orientation applied', async () => {
    const { bob } = await start();
    const res = await t!.get(bob, '/api/preview/thumb/pics/rotated.jpg?inline=true&key=123');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.headers['cache-control']).toBe('private');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(String(res.headers['content-security-policy'])).toContain("script-src 'none';");
    expect(res.headers['content-disposition']).toBe("inline; filename*=utf-8''rotated.jpg");
    const meta = await sharp(res.rawPayload).metadata();
    expect(meta).toMatchObject({ format: 'jpeg', width: 256, height: 256 });
    // Orientation 6 turns the red left half into the top half.
    expect(isRed(await pixel(res.rawPayload, 128, 10))).toBe(true);
    expect(isBlue(await pixel(res.rawPayload, 128, 245))).toBe(true);

    const png = await t!.get(bob, '/api/preview/thumb/pics/wide.png?inline=true');
    expect(png.headers['content-type']).toBe('image/jpeg');
    expect(await sharp(png.rawPayload).metadata()).toMatchObject({ format: 'jpeg', width: 256, height: 256 });
  });

  it('fits big previews inside 1080 pixels, PNG only for images with transparency', async () => {
    const { bob } = await start();
    const wide = await t!.get(bob, '/api/preview/big/pics/wide.png?inline=true');
    expect(wide.headers['content-type']).toBe('image/jpeg');
    expect(await sharp(wide.rawPayload).metadata()).toMatchObject({
      format: 'jpeg',
      width: 1080,
      height: 540,
    });
    const rotated = await t!.get(bob, '/api/preview/big/pics/rotated.jpg?inline=true');
    expect(await sharp(rotated.rawPayload).metadata()).toMatchObject({ width: 600, height: 800 });
    const clear = await t!.get(bob, '/api/preview/big/pics/clear.png?inline=true');
    expect(clear.headers['content-type']).toBe('image/png');
    expect(await sharp(clear.rawPayload).metadata()).toMatchObject({
      format: 'png',
      width: 1080,
      height: 1080,
      hasAlpha: true,
    });
    // Never enlarged.
    const small = await t!.get(bob, '/api/preview/big/pics/deep/small.jpg?inline=true');
    expect(await sharp(small.rawPayload).metadata()).toMatchObject({ width: 64, height: 64 });
  });

  it('serves GIF and SVG as they are (SVG sandboxed), and octet-stream attachments without inline', async () => {
    const { bob, home } = await start();
    const gif = await t!.get(bob, '/api/preview/thumb/pics/anim.gif?inline=true');
    expect(gif.statusCode).toBe(200);
    expect(gif.headers['content-type']).toBe('image/gif');
    expect(gif.rawPayload.equals(await fs.readFile(path.join(home, 'pics/anim.gif')))).toBe(true);
    const svg = await t!.get(bob, '/api/preview/big/pics/icon.svg?inline=true');
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(String(svg.headers['content-security-policy'])).toContain('sandbox');
    const attachment = await t!.get(bob, '/api/preview/thumb/pics/wide.png');
    expect(attachment.headers['content-type']).toBe('application/octet-stream');
    expect(attachment.headers['content-disposition']).toBe("attachment; filename*=utf-8''wide.png");
  });

  it('serves originals when thumbnails or preview resizing are disabled', async () => {
    const { bob, home } = await start({ disableThumbnails: true, disablePreviewResize: true });
    const original = await fs.readFile(path.join(home, 'pics/wide.png'));
    for (const size of ['thumb', 'big']) {
      const res = await t!.get(bob, `/api/preview/${size}/pics/wide.png?inline=true`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.rawPayload.equals(original)).toBe(true);
    }
  });

  it('answers 413 above 10,000 pixels and 500 for an image that does not decode', async () => {
    const { bob, home } = await start();
    await fs.writeFile(
      path.join(home, 'pics/tall.png'),
      await sharp({ create: { width: 4, height: 10_001, channels: 3, background: RED } })
        .png()
        .toBuffer(),
    );
    const tall = await t!.get(bob, '/api/preview/thumb/pics/tall.png');
    expect(tall.statusCode).toBe(413);
    expect(tall.body).toBe(
      '413 Payload Too Large (the image is larger than 10000 pixels in one dimension)\n',
    );
    const broken = await t!.get(bob, '/api/preview/thumb/pics/broken.jpg');
    expect(broken.statusCode).toBe(500);
    expect(broken.body).toBe('500 Internal Server Error\n');
  });

  it('answers 501 for folders, non-images and videos without ffmpeg', async () => {
    const { bob } = await start();
    for (const p of ['notes.txt', 'pics', 'movie.mp4', '']) {
      const res = await t!.get(bob, `/api/preview/thumb/${p}`);
      expect(res.statusCode, p).toBe(501);
      expect(res.body).toBe('501 Not Implemented\n');
    }
  });

  it('answers 202 without download, 400 for another size, 404, 403 for rules and escaping links', async () => {
    const { bob, home } = await start();
    const noDl = await t!.user('nodl', { scope: '/bob', perm: { ...ALL, download: false, share: false } });
    const accepted = await t!.get(noDl, '/api/preview/thumb/pics/wide.png');
    expect(accepted.statusCode).toBe(202);
    expect(accepted.body).toBe('202 Accepted\n');
    const size = await t!.get(bob, '/api/preview/huge/pics/wide.png');
    expect(size.statusCode).toBe(400);
    expect(size.body).toBe('400 Bad Request (unknown preview size huge: use thumb or big)\n');
    expect((await t!.get(bob, '/api/preview/thumb/pics/none.png')).statusCode).toBe(404);
    const ruled = await t!.user('ruled', { scope: '/bob', rules: [deny('/pics/deep')] });
    expect((await t!.get(ruled, '/api/preview/thumb/pics/deep/small.jpg')).statusCode).toBe(403);
    await fs.symlink(path.join(t!.outside, 'secret.jpg'), path.join(home, 'leak.jpg'));
    await fs.symlink(t!.outside, path.join(home, 'out'));
    for (const p of ['leak.jpg', 'out/secret.jpg']) {
      const res = await t!.get(bob, `/api/preview/thumb/${p}`);
      expect(res.statusCode, p).toBe(403);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
    expect((await t!.get(bob, '/api/preview')).statusCode).toBe(301);
    expect(
      (await t!.req(undefined, { method: 'GET', url: '/api/preview/thumb/pics/wide.png' })).statusCode,
    ).toBe(401);
  });

  it('answers conditional and range requests against the source file', async () => {
    const { bob } = await start();
    const first = await t!.get(bob, '/api/preview/thumb/pics/wide.png?inline=true');
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[0-9a-f]+-thumb"$/);
    expect(first.headers['last-modified']).toBeDefined();
    const again = await t!.get(bob, '/api/preview/thumb/pics/wide.png?inline=true', {
      'if-none-match': etag,
    });
    expect(again.statusCode).toBe(304);
    const part = await t!.get(bob, '/api/preview/thumb/pics/wide.png?inline=true', { range: 'bytes=0-1' });
    expect(part.statusCode).toBe(206);
    expect(part.rawPayload.equals(first.rawPayload.subarray(0, 2))).toBe(true);
  });
});

describe('preview cache', () => {
  const folderOf = (real: string) => new PreviewCache(path.join(t!.base, 'cache')).folderOf(real);
  const exists = (p: string) =>
    fs.stat(p).then(
      () => true,
      () => false,
    );

  it('stores previews keyed by real path, size and mtime, and answers from it', async () => {
    const { bob, home } = await start();
    const real = path.join(home, 'pics/wide.png');
    await t!.get(bob, '/api/preview/thumb/pics/wide.png?inline=true');
    const entries = await fs.readdir(folderOf(real));
    const st = await fs.stat(real);
    expect(entries).toEqual([`thumb-${st.size}-${Math.floor(st.mtimeMs)}`]);
    // What is in the cache is what gets served.
    const marker = await sharp({ create: { width: 3, height: 3, channels: 3, background: BLUE } })
      .jpeg()
      .toBuffer();
    await fs.writeFile(path.join(folderOf(real), entries[0]!), marker);
    const cached = await t!.get(bob, '/api/preview/thumb/pics/wide.png?inline=true');
    expect(cached.rawPayload.equals(marker)).toBe(true);
    // A changed file is a different key.
    await fs.utimes(real, new Date(), new Date(Date.now() + 5000));
    const fresh = await t!.get(bob, '/api/preview/thumb/pics/wide.png?inline=true');
    expect((await sharp(fresh.rawPayload).metadata()).width).toBe(256);
    expect(await fs.readdir(folderOf(real))).toHaveLength(1);
  });

  it('drops previews on write, move and delete, descendants included', async () => {
    const { bob, home } = await start();
    const thumb = (p: string) => t!.get(bob, `/api/preview/thumb${p}?inline=true`);
    const wide = path.join(home, 'pics/wide.png');
    const small = path.join(home, 'pics/deep/small.jpg');

    await thumb('/pics/wide.png');
    expect(await exists(folderOf(wide))).toBe(true);
    const png = await fs.readFile(wide);
    const put = await t!.req(bob, { method: 'PUT', url: '/api/resources/pics/wide.png', payload: png });
    expect(put.statusCode).toBe(200);
    expect(await exists(folderOf(wide))).toBe(false);

    await thumb('/pics/wide.png');
    const post = await t!.req(bob, {
      method: 'POST',
      url: '/api/resources/pics/wide.png?override=true',
      payload: png,
    });
    expect(post.statusCode).toBe(200);
    expect(await exists(folderOf(wide))).toBe(false);

    await thumb('/pics/deep/small.jpg');
    expect(await exists(folderOf(small))).toBe(true);
    const moved = await t!.req(bob, {
      method: 'PATCH',
      url: '/api/resources/pics?action=rename&destination=%2Fpictures',
    });
    expect(moved.statusCode).toBe(200);
    expect(await exists(folderOf(small))).toBe(false);

    const movedSmall = path.join(home, 'pictures/deep/small.jpg');
    await thumb('/pictures/deep/small.jpg');
    expect(await exists(folderOf(movedSmall))).toBe(true);
    expect((await t!.req(bob, { method: 'DELETE', url: '/api/resources/pictures' })).statusCode).toBe(204);
    expect(await exists(folderOf(path.join(home, 'pictures')))).toBe(false);
  });

  it('drops previews when a resumable upload replaces the file', async () => {
    const { bob, home } = await start();
    const real = path.join(home, 'pics/deep/small.jpg');
    await t!.get(bob, '/api/preview/thumb/pics/deep/small.jpg');
    expect(await exists(folderOf(real))).toBe(true);
    const data = await halves(32, 32);
    const created = await t!.req(bob, {
      method: 'POST',
      url: '/api/tus/pics/deep/small.jpg?override=true',
      headers: { 'upload-length': String(data.length), 'tus-resumable': '1.0.0' },
    });
    expect(created.statusCode).toBe(201);
    const patched = await t!.req(bob, {
      method: 'PATCH',
      url: '/api/tus/pics/deep/small.jpg',
      headers: {
        'content-type': 'application/offset+octet-stream',
        'upload-offset': '0',
        'tus-resumable': '1.0.0',
      },
      payload: data,
    });
    expect(patched.statusCode).toBe(204);
    expect(await exists(folderOf(real))).toBe(false);
  });

  it('defaults to a cache folder beside the database, hidden when that is inside the served folder', async () => {
    const { bob } = await start({ cacheDir: '' });
    await t!.get(bob, '/api/preview/thumb/pics/wide.png');
    const beside = path.join(t!.base, 'db', 'cache', 'files');
    expect(await exists(beside)).toBe(true);
    expect((await fs.stat(path.join(t!.base, 'db', 'cache'))).mode & 0o777).toBe(0o700);
    await t!.close();

    // The database inside the served folder: the cache gets a dotted name and no user reaches it.
    t = await startFilesApp(
      (base) => ({ cacheDir: '', database: path.join(base, 'root', 'filebrowser.db') }),
      {
        pathEnv: '',
      },
    );
    const whole = await t.user('whole', { scope: '/' });
    await fs.writeFile(path.join(t.root, 'a.png'), await halves(300, 300));
    await fs.mkdir(path.join(t.root, 'cache'));
    const res = await t.get(whole, '/api/preview/thumb/a.png');
    expect(res.statusCode).toBe(200);
    expect(await exists(path.join(t.root, '.filebrowser-cache', 'files'))).toBe(true);
    expect(await fs.readdir(path.join(t.root, 'cache'))).toEqual([]);
    const listing = JSON.parse((await t.get(whole, '/api/resources/')).body) as { items: { name: string }[] };
    expect(listing.items.map((i) => i.name)).not.toContain('.filebrowser-cache');
    expect((await t.get(whole, '/api/resources/.filebrowser-cache/files')).statusCode).toBe(403);
  });
});

describe('video thumbnails', () => {
  it('takes a frame with ffmpeg found on the PATH at start, handing it the opened file', async () => {
    const binDir = await fs.mkdtemp(path.join((await import('node:os')).tmpdir(), 'fb-ffmpeg-'));
    try {
      const frame = path.join(binDir, 'frame.png');
      await fs.writeFile(
        frame,
        await sharp({ create: { width: 640, height: 360, channels: 3, background: BLUE } })
          .png()
          .toBuffer(),
      );
      const log = path.join(binDir, 'args.txt');
      // A stand-in for ffmpeg: records its arguments and the bytes of descriptor 3, prints a frame.
      await fs.writeFile(
        path.join(binDir, 'ffmpeg'),
        `#!/bin/sh\necho "$@" >> '${log}'\ncat <&3 > '${log}.input'\ncat '${frame}'\n`,
        { mode: 0o755 },
      );
      const { bob, home } = await start({}, { pathEnv: `relative-dir:${binDir}` });
      const res = await t!.get(bob, '/api/preview/thumb/movie.mp4?inline=true');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      expect(await sharp(res.rawPayload).metadata()).toMatchObject({ width: 256, height: 256 });
      expect(await fs.readFile(log, 'utf8')).toContain('-i file:/proc/self/fd/3');
      expect(await fs.readFile(`${log}.input`)).toEqual(await fs.readFile(path.join(home, 'movie.mp4')));
    } finally {
      await fs.rm(binDir, { recursive: true, force: true });
    }
  });

  it('resizes at most --imageProcessors at a time', async () => {
    const binDir = await fs.mkdtemp(path.join((await import('node:os')).tmpdir(), 'fb-ffmpeg-'));
    try {
      const frame = path.join(binDir, 'frame.png');
      await fs.writeFile(
        frame,
        await sharp({ create: { width: 32, height: 32, channels: 3, background: RED } })
          .png()
          .toBuffer(),
      );
      const runs = path.join(binDir, 'runs');
      await fs.mkdir(runs);
      // Each run counts the runs in progress (itself included) when it starts.
      await fs.writeFile(
        path.join(binDir, 'ffmpeg'),
        `#!/bin/sh\ntouch '${runs}/running.'$$\nls '${runs}' | grep -c '^running' >> '${binDir}/counts'\nsleep 0.2\nrm '${runs}/running.'$$\ncat '${frame}'\n`,
        { mode: 0o755 },
      );
      const { bob, home } = await start({ imageProcessors: 2 }, { pathEnv: binDir });
      for (let i = 0; i < 6; i++) await fs.writeFile(path.join(home, `v${i}.mkv`), `video ${i}`);
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => t!.get(bob, `/api/preview/thumb/v${i}.mkv`)),
      );
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
      const counts = (await fs.readFile(path.join(binDir, 'counts'), 'utf8')).trim().split('\n').map(Number);
      expect(counts).toHaveLength(6);
      expect(Math.max(...counts)).toBeLessThanOrEqual(2);
    } finally {
      await fs.rm(binDir, { recursive: true, force: true });
    }
  });

  it.skipIf(!ffmpeg)('makes a real thumbnail of a real video when ffmpeg is installed', async () => {
    const { bob, home } = await start({}, { pathEnv: process.env.PATH ?? '' });
    execFileSync(ffmpeg!, [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=5',
      '-t',
      '2',
      '-pix_fmt',
      'yuv420p',
      path.join(home, 'clip.mp4'),
    ]);
    const res = await t!.get(bob, '/api/preview/thumb/clip.mp4');
    expect(res.statusCode).toBe(200);
    expect(await sharp(res.rawPayload).metadata()).toMatchObject({ format: 'jpeg', width: 256, height: 256 });
  });
});
