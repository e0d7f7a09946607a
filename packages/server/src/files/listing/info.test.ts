import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify } from './file-type.js';
import { goMode, goTime, goTimeParts } from './go-format.js';
import { extensionOf, isBinary, knownExtensions, mimeByExtension, sniff } from './mime.js';
import { numberedName } from '../change/numbered-name.js';
import { compileNameFilter } from './name-filter.js';
import { parseQuery } from '../search/search.js';
import { naturalCompare, sortListing } from './sort.js';

describe('Go encodings', () => {
  it('encodes modes like os.FileMode', () => {
    expect(goMode(0o100644)).toBe(420);
    expect(goMode(0o040755)).toBe(2147484141);
    expect(goMode(0o120777)).toBe(((1 << 27) | 0o777) >>> 0);
    expect(goMode(0o010644)).toBe(((1 << 25) | 0o644) >>> 0);
    expect(goMode(0o140755)).toBe(((1 << 24) | 0o755) >>> 0);
    expect(goMode(0o020666)).toBe(((1 << 26) | (1 << 21) | 0o666) >>> 0);
    expect(goMode(0o104755)).toBe(((1 << 23) | 0o755) >>> 0);
    expect(goMode(0o041777)).toBe(((1 << 31) | (1 << 20) | 0o777) >>> 0);
  });

  it('formats times as RFC 3339 with trimmed nanoseconds and the local offset', () => {
    const s = goTime(1_700_000_000_123_456_789n);
    expect(s).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.123456789(Z|[+-]\d\d:\d\d)$/);
    expect(goTime(1_700_000_000_120_000_000n)).toMatch(/\.12(Z|[+-])/);
    expect(goTime(1_700_000_000_000_000_000n)).toMatch(/:\d\d(Z|[+-]\d\d:\d\d)$/);
    const parsed = Date.parse(s);
    expect(Math.floor(parsed / 1000)).toBe(1_700_000_000);
  });

  it('formats seconds and nanoseconds like the nanosecond form, before 1970 too', () => {
    // The straightforward formatting the memoised one replaced.
    const reference = (ns: bigint) => {
      const pad = (n: number, w = 2) => String(n).padStart(w, '0');
      const secs = ns / 1_000_000_000n - (ns < 0n && ns % 1_000_000_000n !== 0n ? 1n : 0n);
      const frac = ns - secs * 1_000_000_000n;
      const d = new Date(Number(secs) * 1000);
      const offset = -d.getTimezoneOffset();
      let out = `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
      if (frac > 0n) out += '.' + frac.toString().padStart(9, '0').replace(/0+$/, '');
      if (offset === 0) return out + 'Z';
      const abs = Math.abs(offset);
      return `${out}${offset > 0 ? '+' : '-'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
    };
    fc.assert(
      fc.property(fc.bigInt({ min: -5_000_000_000_000_000_000n, max: 5_000_000_000_000_000_000n }), (ns) => {
        expect(goTime(ns)).toBe(reference(ns));
        // Truncated seconds with a negative remainder, as a snapshot holds times before 1970.
        const sec = ns / 1_000_000_000n;
        expect(goTimeParts(Number(sec), Number(ns % 1_000_000_000n))).toBe(reference(ns));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('type detection', () => {
  it('uses Go filepath.Ext', () => {
    expect(extensionOf('a.tar.gz')).toBe('.gz');
    expect(extensionOf('.env')).toBe('.env');
    expect(extensionOf('Makefile')).toBe('');
  });

  it('maps extensions through the override table, exact case first', () => {
    expect(mimeByExtension('a.MP4')).toMatch(/^video\//);
    expect(mimeByExtension('a.opus')).toBe('video/ogg');
    expect(mimeByExtension('a.c')).toMatch(/^text\//);
    expect(mimeByExtension('a.zip')).toBe('application/zip');
    expect(mimeByExtension('noext')).toBe('');
  });

  it('sniffs headers', () => {
    expect(sniff(Buffer.from('%PDF-1.4'))).toBe('application/pdf');
    expect(sniff(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe('image/png');
    expect(sniff(Buffer.from('  <html><body>'))).toBe('text/html; charset=utf-8');
    expect(sniff(Buffer.from('plain words'))).toBe('text/plain; charset=utf-8');
    expect(sniff(Buffer.from([0, 1, 2]))).toBe('application/octet-stream');
  });

  it('applies the binary test', () => {
    expect(isBinary(Buffer.alloc(0))).toBe(false);
    expect(isBinary(Buffer.from('tab\tlf\ncr\r\x0b\x1f'))).toBe(false);
    expect(isBinary(Buffer.from([0x61, 0x08]))).toBe(true);
    expect(isBinary(Buffer.from('héllo'))).toBe(false);
    // a multi-byte character cut at the end of the sample is tolerated
    expect(isBinary(Buffer.concat([Buffer.from('abc'), Buffer.from('é').subarray(0, 1)]))).toBe(false);
    expect(isBinary(Buffer.concat([Buffer.from([0xff]), Buffer.from('abcdef')]))).toBe(true);
  });

  it('classifies', () => {
    expect(classify('video/mp4', 1, Buffer.alloc(0))).toBe('video');
    expect(classify('application/pdf', 1, Buffer.alloc(0))).toBe('pdf');
    expect(classify('text/plain', 11 * 1024 * 1024, Buffer.alloc(0))).toBe('blob');
    expect(classify('application/zip', 10, Buffer.alloc(0))).toBe('text'); // the empty-sample quirk
    expect(classify('application/zip', 10, Buffer.from([0, 1]))).toBe('blob');
  });
});

describe('names and sorting', () => {
  it('auto-names copies like File Browser', () => {
    expect(numberedName('a.txt', 1)).toBe('a(1).txt');
    expect(numberedName('a.tar.gz', 2)).toBe('a.tar(2).gz');
    expect(numberedName('.env', 1)).toBe('(1).env');
    expect(numberedName('dir', 3)).toBe('dir(3)');
  });

  it('compares naturally', () => {
    const names = ['a10', 'a2', 'a.txt', 'b', 'a1'];
    expect([...names].sort(naturalCompare)).toEqual(['a.txt', 'a1', 'a2', 'a10', 'b']);
    expect(naturalCompare('x007', 'x7')).toBe(-1); // equal numbers: the rest decides, byte-wise
    expect(naturalCompare('a99999999999999999999b', 'a100000000000000000000a')).toBe(-1);
  });

  it('compares like the BigInt version it replaced', () => {
    const isDigit = (c: number) => c >= 48 && c <= 57;
    const run = (s: string, from: number) => {
      let i = from;
      while (i < s.length && isDigit(s.charCodeAt(i))) i++;
      return i - from;
    };
    const reference = (a: string, b: string): number => {
      let i = 0;
      for (;;) {
        const start = i;
        while (i < a.length && i < b.length && a[i] === b[i]) i++;
        while (i > start && isDigit(a.charCodeAt(i - 1))) i--;
        if (i >= a.length || i >= b.length) {
          if (a.length - i === 0 && b.length - i === 0) return 0;
          if (a.length - i === 0) return -1;
          if (b.length - i === 0) return 1;
        }
        const ia = run(a, i);
        const ib = run(b, i);
        if (ia > 0 && ib > 0) {
          const na = BigInt(a.slice(i, i + ia));
          const nb = BigInt(b.slice(i, i + ib));
          if (na !== nb) return na < nb ? -1 : 1;
          if (ia === ib && i + ia < a.length && i + ib < b.length) {
            i += ia;
            continue;
          }
        }
        const ra = a.slice(i);
        const rb = b.slice(i);
        return ra < rb ? -1 : ra > rb ? 1 : 0;
      }
    };
    const name = fc.stringMatching(/^[0-9a-c._]{0,12}$/);
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(naturalCompare(a, b)).toBe(reference(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it('keeps the inverted asc for names and puts folders first', () => {
    const mk = (name: string, isDir = false, size = 0, mtimeSec = 0) => ({
      name,
      isDir,
      size,
      mtimeSec,
      mtimeNsec: 0,
    });
    const items = () => [mk('b'), mk('a'), mk('z', true), mk('c', false, 5, 3)];
    expect(sortListing(items(), { by: 'name', asc: false }).map((i) => i.name)).toEqual(['z', 'a', 'b', 'c']);
    expect(sortListing(items(), { by: 'name', asc: true }).map((i) => i.name)).toEqual(['z', 'c', 'b', 'a']);
    expect(sortListing(items(), { by: 'modified', asc: false })[0]!.name).toBe('c');
    expect(sortListing(items(), { by: 'size', asc: false }).at(-1)!.name).toBe('z');
    expect(sortListing(items(), { by: 'other', asc: false }).map((i) => i.name)).toEqual([
      'a',
      'b',
      'c',
      'z',
    ]);
  });
});

describe('search query', () => {
  it('decides type:image, audio and video exactly as the MIME table does, in any case', () => {
    for (const media of ['image', 'audio', 'video']) {
      const keep = compileNameFilter(parseQuery(`type:${media}`));
      for (const ext of knownExtensions()) {
        for (const e of [ext, ext.toUpperCase(), ext.slice(0, 2) + ext.slice(2).toUpperCase()]) {
          const name = 'file' + e;
          expect(keep(name), name).toBe(mimeByExtension(name).startsWith(media));
        }
      }
      expect(keep('no-extension')).toBe(false);
    }
  });

  it('parses case, type and quoted terms', () => {
    expect(parseQuery('case:sensitive Foo').terms).toEqual(['Foo']);
    expect(parseQuery('Foo Bar').terms).toEqual(['foo', 'bar']);
    expect(parseQuery('"a b"').terms).toEqual(['a b']);
    const q = parseQuery('type:image x');
    expect(q.terms).toEqual(['x']);
    expect(compileNameFilter(q)('x.png')).toBe(true);
    expect(compileNameFilter(q)('y.png')).toBe(false);
    expect(compileNameFilter(parseQuery('type:pdf'))('r.PDF')).toBe(false);
    expect(compileNameFilter(parseQuery('type:pdf'))('r.pdf')).toBe(true);
  });
});
