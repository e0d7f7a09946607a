import { AppError, badRequest, notFound } from '../errors.js';
import { etagOf } from '../files/listing/go-format.js';
import { openPinnedFile } from '../files/access/anchor.js';
import type { Opened } from '../files/access/resolver.js';

/** Subtitle files are read whole to convert them, so they are capped. */
export const MAX_SUBTITLE_BYTES = 4 * 1024 * 1024;

/**
 * File Browser's subtitle name test (contract 3.3), with the dot escaped this time: `foo_srt` is
 * not a subtitle file (the old server listed it and then served it unconverted).
 */
export function isSubtitleName(name: string): boolean {
  return /\.(vtt|srt|ass|ssa)$/i.test(name);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function vttTime(ms: number): string {
  const h = Math.floor(ms / 3600000);
  const m = Math.floor((ms % 3600000) / 60000);
  const s = Math.floor((ms % 60000) / 1000);
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(Math.round(ms % 1000), 3)}`;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** SRT → WebVTT: `<br>` tags become line breaks, commas in times become dots. */
export function srtToVtt(srt: string): string {
  const blocks = stripBom(srt)
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/);
  const cues: string[] = [];
  const timing = /(\d{1,2}):(\d{2}):(\d{2})[,.](\d{1,3})\s*-->\s*(\d{1,2}):(\d{2}):(\d{2})[,.](\d{1,3})/;
  for (const block of blocks) {
    const lines = block.trim().split('\n');
    const at = lines.findIndex((l) => timing.test(l));
    if (at < 0) continue;
    const m = timing.exec(lines[at]!)!;
    const ms = (i: number) =>
      Number(m[i]) * 3600000 +
      Number(m[i + 1]) * 60000 +
      Number(m[i + 2]) * 1000 +
      Number(m[i + 3]!.padEnd(3, '0'));
    const text = lines
      .slice(at + 1)
      .join('\n')
      .replace(/<br\s*\/?>/gi, '\n');
    cues.push(`${vttTime(ms(1))} --> ${vttTime(ms(5))}\n${text}`);
  }
  return `WEBVTT\n\n${cues.join('\n\n')}\n`;
}

/** ASS/SSA → WebVTT: dialogue lines of the [Events] section, override tags removed. */
export function assToVtt(ass: string): string {
  const lines = stripBom(ass).replace(/\r\n?/g, '\n').split('\n');
  let format: string[] = [];
  let inEvents = false;
  const cues: { start: number; end: number; text: string }[] = [];
  const time = (t: string) => {
    const m = /^(\d+):(\d{2}):(\d{2})[.:](\d{1,3})$/.exec(t.trim());
    if (!m) throw badRequest(`the subtitle file has an invalid time: ${t.trim()}`);
    return (
      Number(m[1]) * 3600000 +
      Number(m[2]) * 60000 +
      Number(m[3]) * 1000 +
      Number(m[4]!.padEnd(3, '0').slice(0, 3))
    );
  };
  for (const raw of lines) {
    const line = raw.trim();
    if (/^\[.*\]$/.test(line)) {
      inEvents = line.toLowerCase() === '[events]';
      continue;
    }
    if (!inEvents) continue;
    if (/^format\s*:/i.test(line)) {
      format = line
        .replace(/^format\s*:/i, '')
        .split(',')
        .map((f) => f.trim().toLowerCase());
      continue;
    }
    if (!/^dialogue\s*:/i.test(line)) continue;
    const fields = line.replace(/^dialogue\s*:/i, '').split(',');
    const textAt = format.indexOf('text');
    const get = (name: string) => fields[format.indexOf(name)] ?? '';
    const text = fields
      .slice(textAt < 0 ? 9 : textAt)
      .join(',')
      .replace(/\{[^}]*\}/g, '')
      .replace(/\\[Nn]/g, '\n')
      .replace(/\\h/g, ' ');
    cues.push({ start: time(get('start')), end: time(get('end')), text });
  }
  cues.sort((a, b) => a.start - b.start);
  return `WEBVTT\n\n${cues.map((c) => `${vttTime(c.start)} --> ${vttTime(c.end)}\n${c.text}`).join('\n\n')}\n`;
}

/** Converts a subtitle file's text to WebVTT by its extension; VTT passes through. */
export function toWebVtt(name: string, text: string): string {
  const lower = name.toLowerCase();
  if (lower.endsWith('.srt')) return srtToVtt(text);
  if (lower.endsWith('.ass') || lower.endsWith('.ssa')) return assToVtt(text);
  return text;
}

/** Windows-1252 at 0x80–0x9F (the rest is Latin-1); undefined bytes stay as their C1 controls. */
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * Subtitle text as UTF-8 when it is valid UTF-8, otherwise as Windows-1252: the encoding most
 * SRT files that are not UTF-8 were written in. (Node's own 'windows-1252' decoder reads Latin-1,
 * which would turn curly quotes into control characters, hence the table.)
 */
export function decodeSubtitle(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    let out = '';
    for (const b of bytes) out += b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] : String.fromCharCode(b);
    return out;
  }
}

export type SubtitleBody =
  /** WebVTT already: streamed as it is. */
  | { kind: 'file' }
  /** Converted from SRT, ASS or SSA. */
  | { kind: 'converted'; text: string; mtimeMs: number; etag: string };

/**
 * `GET /api/subtitle` (contract 6.3) on a resolved path the caller may read: 400 for folders and
 * names that are not subtitles, 413 for files too large to convert; SRT, ASS and SSA (in any
 * letter case) are converted to WebVTT, other subtitle files are sent unchanged.
 */
export async function subtitleFor(r: Opened): Promise<SubtitleBody> {
  if (r.stat?.isDirectory()) throw badRequest('the path is a folder, not a subtitle file');
  if (!isSubtitleName(r.name)) throw badRequest('not a subtitle file (.srt, .ass, .ssa or .vtt)');
  if (!/\.(srt|ass|ssa)$/i.test(r.name)) return { kind: 'file' };
  if (!r.node) throw notFound();
  const fh = await openPinnedFile(r.node);
  try {
    const st = await fh.stat({ bigint: true });
    if (st.size > BigInt(MAX_SUBTITLE_BYTES)) throw tooLarge();
    // Read one byte more than allowed: a file that grew since stat is refused, not cut.
    const buf = Buffer.alloc(MAX_SUBTITLE_BYTES + 1);
    let off = 0;
    while (off < buf.length) {
      const { bytesRead } = await fh.read(buf, off, buf.length - off, off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    if (off > MAX_SUBTITLE_BYTES) throw tooLarge();
    const text = toWebVtt(r.name, decodeSubtitle(buf.subarray(0, off)));
    return { kind: 'converted', text, mtimeMs: Number(st.mtimeNs / 1_000_000n), etag: etagOf(st) };
  } finally {
    await fh.close();
  }
}

function tooLarge(): AppError {
  return new AppError(
    'payload_too_large',
    `the subtitle file is larger than ${MAX_SUBTITLE_BYTES / 1024 / 1024} MiB and cannot be converted`,
  );
}
