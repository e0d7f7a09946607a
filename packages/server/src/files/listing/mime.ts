import fs from 'node:fs';

/**
 * MIME types by extension, built like Go's `mime.TypeByExtension` as File Browser used it: Go's
 * built-in table, then the host's /etc/mime.types, then File Browser's bundled override table
 * (contract Appendix A), which wins. Only the class of the override entries matters for typing;
 * where the host knows a type of the same class its exact name is kept for Content-Type headers.
 */

const GO_BUILTIN: Record<string, string> = {
  '.avif': 'image/avif',
  '.css': 'text/css; charset=utf-8',
  '.gif': 'image/gif',
  '.htm': 'text/html; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.jpeg': 'image/jpeg',
  '.jpg': 'image/jpeg',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.mjs': 'text/javascript; charset=utf-8',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
  '.webp': 'image/webp',
  '.xml': 'text/xml; charset=utf-8',
};

const OVERRIDE_CLASSES: Record<'video' | 'audio' | 'image' | 'text', string> = {
  video:
    '.afl .asf .avi .avs .dif .divx .dl .dv .fli .flv .fmf .gl .isu .m1v .m2v .m4v .mjpg .mkv .moov .mov .movie .mp4 .mpe .mpeg .mpg .mv .ogv .qt .qtc .rv .vdo .viv .vivo .vos .xdr .xsr',
  audio:
    '.aac .aif .aifc .aiff .amr .au .caf .flac .funk .gsd .gsm .it .jam .kar .la .lam .lma .m2a .m3u .m4a .mjf .mod .mp2 .mp3 .mpa .mpga .my .oga .ogg .pfunk .qcp .ra .ram .rmi .rmm .rmp .rpm .s3m .sid .snd .spx .tsi .voc .vox .vqe .vqf .vql .wav .xm',
  image:
    '.art .bmp .flo .fpx .g3 .gif .ico .ief .iefs .jfif .jfif-tbnl .jpe .jpeg .jpg .jps .jut .nap .naplps .nif .niff .pbm .pct .pcx .pgm .pic .pict .png .ppm .qif .qti .qtif .rast .rf .rgb .rp .svf .svg .tif .tiff .turbot .wbmp .webp .x-png .xbm .xif .xpm .xwd',
  text: '.abc .acgi .aip .asm .asp .c .c++ .cc .com .conf .cpp .csh .css .csv .cxx .def .el .etx .f .f77 .f90 .flx .for .g .h .hh .hlb .htc .htm .html .htmls .htt .htx .ics .icz .idc .jav .java .js .ksh .list .log .lsp .lst .lsx .m .manifest .mar .mcf .mjs .p .pas .pl .pm .py .rexx .rt .rtf .rtx .s .scm .sdml .sgm .sgml .sh .shtml .spc .ssi .talk .tcl .tcsh .text .tsv .txt .uil .uni .unis .uri .uris .uu .uue .vcard .vcf .vcs .vue .wml .wmls .wsc .xml .zsh',
};

/** Entries of the bundled table outside the four classes above: decided by the binary test. */
const OVERRIDE_APPLICATION: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.psd': 'application/octet-stream',
  '.zip': 'application/zip',
  '.gz': 'application/x-gzip',
  '.gzip': 'application/x-gzip',
  '.tgz': 'application/gnutar',
  '.tar': 'application/x-tar',
  '.doc': 'application/msword',
  '.dot': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.ppt': 'application/vnd.ms-powerpoint',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.json': 'application/json',
  '.exe': 'application/octet-stream',
  '.bin': 'application/octet-stream',
  '.class': 'application/java',
  '.jar': 'application/java-archive',
  '.rar': 'application/x-rar-compressed',
  '.7z': 'application/x-7z-compressed',
  '.bz2': 'application/x-bzip2',
  '.xz': 'application/x-xz',
  '.iso': 'application/x-iso9660-image',
  '.swf': 'application/x-shockwave-flash',
  '.ps': 'application/postscript',
  '.ai': 'application/postscript',
  '.eps': 'application/postscript',
  '.tex': 'application/x-tex',
  '.latex': 'application/x-latex',
  '.wrl': 'x-world/x-vrml',
  '.xyz': 'chemical/x-pdb',
};

function loadSystemTypes(file = '/etc/mime.types'): Map<string, string> {
  const map = new Map<string, string>();
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return map;
  }
  for (const line of text.split('\n')) {
    const clean = line.replace(/#.*/, '').trim();
    if (!clean) continue;
    const [type, ...exts] = clean.split(/\s+/);
    if (!type) continue;
    for (const ext of exts) map.set('.' + ext, type);
  }
  return map;
}

function buildTable(): Map<string, string> {
  const table = new Map<string, string>(Object.entries(GO_BUILTIN));
  for (const [ext, type] of loadSystemTypes()) table.set(ext, type);
  for (const [cls, exts] of Object.entries(OVERRIDE_CLASSES)) {
    for (const ext of exts.split(' ')) {
      const known = table.get(ext);
      const fallback = cls === 'text' ? 'text/plain; charset=utf-8' : `${cls}/x-${ext.slice(1)}`;
      table.set(ext, known?.startsWith(cls + '/') ? known : fallback);
    }
  }
  for (const [ext, type] of Object.entries(OVERRIDE_APPLICATION)) table.set(ext, type);
  table.set('.opus', 'video/ogg'); // sic: File Browser's table maps .opus to video
  return table;
}

let table: Map<string, string> | undefined;

/** Go's filepath.Ext: the last ".xxx" of a base name, dot included; "" when none. */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot);
}

/** MIME type by extension (exact case first, then lower case), or "" when unknown. */
export function mimeByExtension(name: string): string {
  table ??= buildTable();
  const ext = extensionOf(name);
  if (!ext) return '';
  return table.get(ext) ?? table.get(ext.toLowerCase()) ?? '';
}

/**
 * The extensions whose MIME type starts with `prefix` (e.g. `image`), in the table's own case,
 * which is lower case: together with a lower-case fallback they decide exactly what
 * `mimeByExtension(name).startsWith(prefix)` decides.
 */
export function extensionsOfType(prefix: string): string[] {
  table ??= buildTable();
  const out: string[] = [];
  for (const [ext, type] of table) if (type.startsWith(prefix)) out.push(ext);
  return out;
}

/** Every extension the table knows (tests). */
export function knownExtensions(): string[] {
  table ??= buildTable();
  return [...table.keys()];
}

function startsWith(buf: Buffer, sig: string | number[], at = 0): boolean {
  const bytes = typeof sig === 'string' ? Buffer.from(sig, 'latin1') : Buffer.from(sig);
  return buf.length >= at + bytes.length && buf.subarray(at, at + bytes.length).equals(bytes);
}

const HTML_TAGS = [
  '<!DOCTYPE HTML',
  '<HTML',
  '<HEAD',
  '<SCRIPT',
  '<IFRAME',
  '<H1',
  '<DIV',
  '<FONT',
  '<TABLE',
  '<A',
  '<STYLE',
  '<TITLE',
  '<B',
  '<BODY',
  '<BR',
  '<P',
  '<!--',
];

/** Bytes that WHATWG sniffing counts as binary data. */
function hasBinaryByte(buf: Buffer): boolean {
  for (const b of buf) {
    if (b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f)) return true;
  }
  return false;
}

/** Content sniffing of the first 512 bytes, the subset of Go's http.DetectContentType that matters here. */
export function sniff(sample: Buffer): string {
  let i = 0;
  while (i < sample.length && [0x09, 0x0a, 0x0c, 0x0d, 0x20].includes(sample[i] as number)) i++;
  const ws = sample.subarray(i);
  const upper = ws.subarray(0, 16).toString('latin1').toUpperCase();
  for (const tag of HTML_TAGS) {
    if (upper.startsWith(tag)) {
      const next = ws[tag.length];
      if (next === 0x20 || next === 0x3e) return 'text/html; charset=utf-8';
    }
  }
  if (startsWith(ws, '<?xml')) return 'text/xml; charset=utf-8';
  if (startsWith(sample, '%PDF-')) return 'application/pdf';
  if (startsWith(sample, '%!PS-Adobe-')) return 'application/postscript';
  if (startsWith(sample, [0xfe, 0xff]) || startsWith(sample, [0xff, 0xfe]))
    return 'text/plain; charset=utf-16';
  if (startsWith(sample, [0xef, 0xbb, 0xbf])) return 'text/plain; charset=utf-8';
  if (startsWith(sample, [0, 0, 1, 0])) return 'image/x-icon';
  if (startsWith(sample, [0, 0, 2, 0])) return 'image/x-icon';
  if (startsWith(sample, 'BM')) return 'image/bmp';
  if (startsWith(sample, 'GIF87a') || startsWith(sample, 'GIF89a')) return 'image/gif';
  if (startsWith(sample, 'RIFF') && startsWith(sample, 'WEBPVP', 8)) return 'image/webp';
  if (startsWith(sample, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(sample, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(sample, 'FORM') && startsWith(sample, 'AIFF', 8)) return 'audio/aiff';
  if (startsWith(sample, '.snd')) return 'audio/basic';
  if (startsWith(sample, 'OggS\x00')) return 'application/ogg';
  if (startsWith(sample, 'MThd\x00\x00\x00\x06')) return 'audio/midi';
  if (startsWith(sample, 'ID3')) return 'audio/mpeg';
  if (startsWith(sample, 'RIFF') && startsWith(sample, 'AVI ', 8)) return 'video/avi';
  if (startsWith(sample, 'RIFF') && startsWith(sample, 'WAVE', 8)) return 'audio/wave';
  if (sample.length >= 12 && startsWith(sample, 'ftyp', 4)) {
    const boxSize = sample.readUInt32BE(0);
    if (boxSize % 4 === 0 && boxSize <= sample.length) {
      for (let at = 8; at + 3 <= boxSize; at += 4) {
        if (at === 12) continue;
        if (startsWith(sample, 'mp4', at)) return 'video/mp4';
      }
    }
  }
  if (startsWith(sample, [0x1a, 0x45, 0xdf, 0xa3])) return 'video/webm';
  if (startsWith(sample, [0, 0x61, 0x73, 0x6d])) return 'application/wasm';
  if (startsWith(sample, 'PK\x03\x04')) return 'application/zip';
  if (startsWith(sample, [0x1f, 0x8b, 0x08])) return 'application/x-gzip';
  if (startsWith(sample, 'Rar!\x1a\x07')) return 'application/x-rar-compressed';
  if (startsWith(sample, 'wOFF')) return 'font/woff';
  if (startsWith(sample, 'wOF2')) return 'font/woff2';
  if (!hasBinaryByte(sample)) return 'text/plain; charset=utf-8';
  return 'application/octet-stream';
}

/**
 * File Browser's binary test on a ≤512-byte sample, rune by rune: any code point ≤ 8 is binary;
 * U+FFFD (invalid byte) is tolerated only within the last 4 runes (a multi-byte character cut by
 * the sample end), and only if every rune from the first U+FFFD to the end is U+FFFD.
 */
export function isBinary(sample: Buffer): boolean {
  const runes = [...sample.toString('utf8')];
  const firstBad = runes.indexOf('\ufffd');
  for (let i = 0; i < runes.length; i++) {
    const cp = runes[i]!.codePointAt(0) as number;
    if (cp <= 8) return true;
    if (cp === 0xfffd) {
      if (runes.length - i > 4) return true;
      if (runes.slice(firstBad).some((r) => r !== '\ufffd')) return true;
    }
  }
  return false;
}
