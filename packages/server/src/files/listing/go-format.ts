import type fs from 'node:fs';

/**
 * Modes, times and ETags written as File Browser's Go server wrote them (contract 2.4), so that
 * its clients read ours unchanged.
 */

export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;
export const S_IFIFO = 0o010000;
export const S_IFSOCK = 0o140000;
export const S_IFCHR = 0o020000;
export const S_IFBLK = 0o060000;

/** Go's os.FileMode encoding of a POSIX mode: permission bits plus Go's type bits (contract 2.4). */
export function goMode(mode: number | bigint): number {
  const m = Number(mode);
  let out = m & 0o777;
  if (m & 0o4000) out |= 1 << 23;
  if (m & 0o2000) out |= 1 << 22;
  if (m & 0o1000) out |= 1 << 20;
  switch (m & S_IFMT) {
    case S_IFDIR:
      out |= 1 << 31;
      break;
    case S_IFLNK:
      out |= 1 << 27;
      break;
    case S_IFIFO:
      out |= 1 << 25;
      break;
    case S_IFSOCK:
      out |= 1 << 24;
      break;
    case S_IFCHR:
      out |= (1 << 26) | (1 << 21);
      break;
    case S_IFBLK:
      out |= 1 << 26;
      break;
  }
  return out >>> 0;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Date, time and offset text by Unix second: files written together share their second. */
const secondTexts = new Map<number, { head: string; zone: string }>();

/**
 * Go's RFC 3339 with nanoseconds (trailing zeros trimmed) in the server's local offset, "Z" for
 * UTC, from whole seconds and nanoseconds (both exact numbers; `nsec` may be negative for times
 * before 1970, as a truncating division leaves it).
 */
export function goTimeParts(sec: number, nsec: number): string {
  if (nsec < 0) {
    sec -= 1;
    nsec += 1e9;
  }
  let text = secondTexts.get(sec);
  if (!text) {
    const d = new Date(sec * 1000);
    const offset = -d.getTimezoneOffset();
    const head = `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    const abs = Math.abs(offset);
    const zone =
      offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
    text = { head, zone };
    if (secondTexts.size >= 4096) secondTexts.clear();
    secondTexts.set(sec, text);
  }
  if (nsec === 0) return text.head + text.zone;
  const frac = String(nsec).padStart(9, '0');
  let end = frac.length;
  while (frac.charCodeAt(end - 1) === 48) end--;
  return `${text.head}.${frac.slice(0, end)}${text.zone}`;
}

/** `goTimeParts` of a time in nanoseconds. */
export function goTime(ns: bigint): string {
  const secs = ns / 1_000_000_000n - (ns < 0n && ns % 1_000_000_000n !== 0n ? 1n : 0n);
  return goTimeParts(Number(secs), Number(ns - secs * 1_000_000_000n));
}

/** The ETag File Browser sends after a write: hex of the mtime in ns, then hex of the size. */
export function etagOf(st: fs.BigIntStats): string {
  return `"${st.mtimeNs.toString(16)}${st.size.toString(16)}"`;
}
