import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_SUBTITLE_BYTES } from '../src/preview/subtitles.js';
import { ALL, deny, startFilesApp, type FilesApp } from './files-helpers.js';

let t: FilesApp;
let bob: string;
let home: string;

const SRT =
  '1\r\n00:00:01,000 --> 00:00:02,500\r\nHello<br/>there\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nBye\r\n';
const VTT_OF_SRT =
  'WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello\nthere\n\n00:00:03.000 --> 00:00:04.000\nBye\n';

beforeEach(async () => {
  t = await startFilesApp();
  bob = await t.user('bob');
  home = path.join(t.root, 'bob');
  await fs.mkdir(path.join(home, 'movies/subs'), { recursive: true });
  await fs.writeFile(path.join(home, 'movies/film.mp4'), '');
  await fs.writeFile(path.join(home, 'movies/film.en.srt'), SRT);
  await fs.writeFile(path.join(home, 'movies/film.EN.SRT'), SRT);
  await fs.writeFile(
    path.join(home, 'movies/film.fr.ass'),
    '[Script Info]\nTitle: f\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\nDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\b1}Bonjour{\\b0}, monde\n',
  );
  await fs.writeFile(
    path.join(home, 'movies/subs/film.de.vtt'),
    'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHallo\n',
  );
  // Latin-1 / Windows-1252: "café" with 0xE9, and a curly quote 0x92.
  await fs.writeFile(
    path.join(home, 'movies/film.latin.srt'),
    Buffer.concat([
      Buffer.from('1\n00:00:01,000 --> 00:00:02,000\ncaf'),
      Buffer.from([0xe9, 0x92]),
      Buffer.from('\n'),
    ]),
  );
  await fs.writeFile(path.join(home, 'movies/notes.txt'), 'x');
  await fs.writeFile(
    path.join(home, 'movies/bad.ass'),
    '[Events]\nFormat: Start, End, Text\nDialogue: nope,0:00:01.00,x\n',
  );
  await fs.writeFile(path.join(t.outside, 'secret.srt'), SRT);
});
afterEach(async () => {
  await t.close();
});

describe('GET /api/subtitle', () => {
  it('converts SRT to WebVTT with the raw file safety headers', async () => {
    const res = await t.get(bob, '/api/subtitle/movies/film.en.srt?inline=true');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(VTT_OF_SRT);
    expect(res.headers['content-type']).toBe('text/vtt; charset=utf-8');
    expect(res.headers['cache-control']).toBe('private');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(String(res.headers['content-security-policy'])).toContain("script-src 'none';");
    expect(res.headers['content-disposition']).toBe("inline; filename*=utf-8''film.en.srt");
    // Also for an attachment, and for an upper-case extension (the old server sent .SRT unconverted).
    const upper = await t.get(bob, '/api/subtitle/movies/film.EN.SRT');
    expect(upper.body).toBe(VTT_OF_SRT);
    expect(upper.headers['content-type']).toBe('text/vtt; charset=utf-8');
    expect(upper.headers['content-disposition']).toBe("attachment; filename*=utf-8''film.EN.SRT");
  });

  it('converts ASS, passes VTT through with ranges, and reads Windows-1252 text', async () => {
    const ass = await t.get(bob, '/api/subtitle/movies/film.fr.ass?inline=true');
    expect(ass.body).toBe('WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nBonjour, monde\n');
    const vtt = await t.get(bob, '/api/subtitle/movies/subs/film.de.vtt?inline=true');
    expect(vtt.body).toBe('WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHallo\n');
    expect(vtt.headers['content-type']).toBe('text/vtt; charset=utf-8');
    const part = await t.get(bob, '/api/subtitle/movies/subs/film.de.vtt', { range: 'bytes=0-5' });
    expect(part.statusCode).toBe(206);
    expect(part.body).toBe('WEBVTT');
    const latin = await t.get(bob, '/api/subtitle/movies/film.latin.srt?inline=true');
    expect(latin.body).toBe('WEBVTT\n\n00:00:01.000 --> 00:00:02.000\ncafé\u2019\n');
    const etag = String(latin.headers.etag);
    expect(
      (await t.get(bob, '/api/subtitle/movies/film.latin.srt', { 'if-none-match': etag })).statusCode,
    ).toBe(304);
  });

  it('refuses files too large to convert with 413 and a message', async () => {
    const cue = '1\n00:00:01,000 --> 00:00:02,000\n' + 'x'.repeat(1000) + '\n\n';
    await fs.writeFile(
      path.join(home, 'movies/huge.srt'),
      cue.repeat(Math.ceil(MAX_SUBTITLE_BYTES / cue.length) + 1),
    );
    const res = await t.get(bob, '/api/subtitle/movies/huge.srt');
    expect(res.statusCode).toBe(413);
    expect(res.body).toBe(
      '413 Payload Too Large (the subtitle file is larger than 4 MiB and cannot be converted)\n',
    );
  });

  it('answers 400 for folders, other files and unreadable subtitles; 404; 202 without download', async () => {
    const dir = await t.get(bob, '/api/subtitle/movies');
    expect(dir.statusCode).toBe(400);
    expect(dir.body).toBe('400 Bad Request (the path is a folder, not a subtitle file)\n');
    const txt = await t.get(bob, '/api/subtitle/movies/notes.txt');
    expect(txt.statusCode).toBe(400);
    expect(txt.body).toBe('400 Bad Request (not a subtitle file (.srt, .ass, .ssa or .vtt))\n');
    const bad = await t.get(bob, '/api/subtitle/movies/bad.ass');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('invalid time');
    expect((await t.get(bob, '/api/subtitle/movies/none.srt')).statusCode).toBe(404);
    const noDl = await t.user('nodl', { scope: '/bob', perm: { ...ALL, download: false, share: false } });
    const accepted = await t.get(noDl, '/api/subtitle/movies/film.en.srt');
    expect(accepted.statusCode).toBe(202);
    expect(accepted.body).toBe('202 Accepted\n');
    expect((await t.get(bob, '/api/subtitle')).statusCode).toBe(301);
  });

  it('obeys rules and never follows a link out of the scope', async () => {
    const ruled = await t.user('ruled', { scope: '/bob', rules: [deny('/movies/subs')] });
    expect((await t.get(ruled, '/api/subtitle/movies/subs/film.de.vtt')).statusCode).toBe(403);
    await fs.symlink(path.join(t.outside, 'secret.srt'), path.join(home, 'movies/leak.srt'));
    await fs.symlink(t.outside, path.join(home, 'out'));
    for (const p of ['movies/leak.srt', 'out/secret.srt']) {
      const res = await t.get(bob, `/api/subtitle/${p}`);
      expect(res.statusCode, p).toBe(403);
      expect(res.body).not.toContain('Hello');
    }
  });
});
