import { describe, expect, it } from 'vitest';
import { assToVtt, isSubtitleName, srtToVtt, toWebVtt } from './subtitles.js';

describe('subtitles', () => {
  it('recognises subtitle names case-insensitively, with a real dot', () => {
    expect(isSubtitleName('movie.en.SRT')).toBe(true);
    expect(isSubtitleName('movie.vtt')).toBe(true);
    expect(isSubtitleName('foo_srt')).toBe(false);
    expect(isSubtitleName('movie.mp4')).toBe(false);
  });

  it('converts SRT with CRLF, BOM and <br> to WebVTT', () => {
    const srt =
      '\ufeff1\r\n00:00:01,500 --> 00:00:03,000\r\nHello<br>world\r\n\r\n2\r\n00:01:02,050 --> 01:00:00,000\r\nBye\r\n';
    expect(srtToVtt(srt)).toBe(
      'WEBVTT\n\n00:00:01.500 --> 00:00:03.000\nHello\nworld\n\n00:01:02.050 --> 01:00:00.000\nBye\n',
    );
  });

  it('converts ASS dialogue, dropping override tags and keeping commas in text', () => {
    const ass = [
      '[Script Info]',
      'Title: x',
      '',
      '[Events]',
      'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
      'Dialogue: 0,0:00:05.00,0:00:07.50,Default,,0,0,0,,{\\i1}Well,{\\i0} hello\\Nthere',
      'Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,First',
    ].join('\n');
    expect(assToVtt(ass)).toBe(
      'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nFirst\n\n00:00:05.000 --> 00:00:07.500\nWell, hello\nthere\n',
    );
  });

  it('passes VTT through and reports bad ASS times clearly', () => {
    expect(toWebVtt('a.vtt', 'WEBVTT\n')).toBe('WEBVTT\n');
    expect(() => assToVtt('[Events]\nFormat: Start, End, Text\nDialogue: nope,0:00:01.00,x')).toThrow(
      /invalid time/,
    );
  });
});
