import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deny, startFilesApp, type FilesApp } from './files-helpers.js';

let t: FilesApp;
let bob: string;
let home: string;

beforeEach(async () => {
  t = await startFilesApp();
  bob = await t.user('bob');
  home = path.join(t.root, 'bob');
  await fs.mkdir(path.join(home, 'music/Album'), { recursive: true });
  await fs.mkdir(path.join(home, 'private'), { recursive: true });
  await fs.writeFile(path.join(home, 'music/Album/Song One.mp3'), '');
  await fs.writeFile(path.join(home, 'music/notes.txt'), '');
  await fs.writeFile(path.join(home, 'report.PDF'), '');
  await fs.writeFile(path.join(home, 'report.pdf'), '');
  await fs.writeFile(path.join(home, 'private/song.txt'), '');
  await fs.writeFile(path.join(t.outside, 'song-secret.txt'), '');
  await fs.symlink(t.outside, path.join(home, 'song-escape'));
  await fs.symlink(path.join(t.outside, 'song-secret.txt'), path.join(home, 'music/song-link.txt'));
});
afterEach(async () => {
  await t.close();
});

const hits = async (url: string, token = bob) => {
  const res = await t.get(token, url);
  expect(res.statusCode).toBe(200);
  return res.body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { dir: boolean; path: string });
};

describe('GET /api/search', () => {
  it('streams JSON lines relative to the search folder, case-insensitive by default', async () => {
    const res = await t.get(bob, '/api/search/?query=song');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body.split('\n')[0]).toMatch(/^\{"dir":(true|false),"path":"[^/]/);
    const found = (await hits('/api/search/?query=song')).map((h) => h.path).sort();
    // Escaping links are neither followed nor reported.
    expect(found).toEqual(['music/Album/Song One.mp3', 'private/song.txt']);
    expect((await hits('/api/search/music?query=album')).map((h) => h)).toEqual([
      { dir: true, path: 'Album' },
    ]);
  });

  it('understands case:sensitive, quotes and type:', async () => {
    expect((await hits('/api/search/?query=case:sensitive%20Song')).map((h) => h.path)).toEqual([
      'music/Album/Song One.mp3',
    ]);
    expect((await hits('/api/search/?query=%22song%20one%22')).map((h) => h.path)).toEqual([
      'music/Album/Song One.mp3',
    ]);
    expect((await hits('/api/search/?query=type:audio')).map((h) => h.path)).toEqual([
      'music/Album/Song One.mp3',
    ]);
    expect((await hits('/api/search/?query=type:pdf')).map((h) => h.path)).toEqual(['report.pdf']);
  });

  it('applies rules, pruning denied folders', async () => {
    const ruled = await t.user('ruled', { scope: '/bob', rules: [deny('/private')] });
    expect((await hits('/api/search/?query=song', ruled)).map((h) => h.path)).toEqual([
      'music/Album/Song One.mp3',
    ]);
  });

  it('answers 404 for a missing folder and an empty body for no hits', async () => {
    expect((await t.get(bob, '/api/search/none?query=x')).statusCode).toBe(404);
    const none = await t.get(bob, '/api/search/?query=zzz');
    expect(none.body).toBe('');
  });

  it('never stumbles on pipes, loops, dangling or escaping links', async () => {
    execFileSync('mkfifo', [path.join(home, 'music/song.fifo')]);
    await fs.symlink('song-loop-b', path.join(home, 'song-loop-a'));
    await fs.symlink('song-loop-a', path.join(home, 'song-loop-b'));
    await fs.symlink('nowhere', path.join(home, 'song-dangling'));
    await fs.symlink(path.join(t.outside, 'nowhere'), path.join(home, 'song-dangling-out'));
    const found = (await hits('/api/search/?query=song')).map((h) => h.path).sort();
    expect(found).toEqual([
      'music/Album/Song One.mp3',
      'music/song.fifo',
      'private/song.txt',
      'song-dangling',
    ]);
  });

  it('answers every hit of a folder of thousands of files exactly once, in name order, rules applied', async () => {
    const big = path.join(home, 'big');
    await fs.mkdir(path.join(big, 'private'), { recursive: true });
    await fs.writeFile(path.join(big, 'private', 'song-hidden.txt'), '');
    const expected: string[] = [];
    const count = 3007; // a few of the reader's read buffers (1,024 entries)
    for (let i = 0; i < count; i += 250) {
      const names = Array.from({ length: Math.min(250, count - i) }, (_, k) =>
        (i + k) % 10 === 0 ? `Song-${i + k}.txt` : `file-${i + k}.dat`,
      );
      await Promise.all(names.map((n) => fs.writeFile(path.join(big, n), '')));
      expected.push(...names.filter((n) => n.startsWith('Song') && n !== 'Song-20.txt'));
    }
    const ruled = await t.user('ruled-big', {
      scope: '/bob',
      rules: [deny('/big/private'), deny('/big/Song-20.txt')],
    });
    const found = (await hits('/api/search/big?query=song', ruled)).map((h) => h.path);
    expect(found).toEqual(expected.sort());
  });

  it('stops when the client goes away and keeps serving others', async () => {
    for (let d = 0; d < 40; d++) {
      await fs.mkdir(path.join(home, `many/d${d}`), { recursive: true });
      for (let f = 0; f < 50; f++) await fs.writeFile(path.join(home, `many/d${d}/hit-${f}.txt`), '');
    }
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const firstChunk = await new Promise<string>((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: '/api/search/many?query=hit', headers: { 'x-auth': bob } },
        (res) => {
          res.once('data', (d: Buffer) => {
            resolve(d.toString());
            req.destroy();
          });
        },
      );
      req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
    });
    expect(firstChunk).toMatch(/^\{"dir":false,"path":"d\d+\/hit-\d+\.txt"\}\n/);
    const all = await hits('/api/search/many?query=hit');
    expect(all).toHaveLength(2000);
  });
});
