import { FILE_TYPES, type FileType } from '@filebrowser/contract';
import {
  FIELDS,
  F_CTIME_NS,
  F_CTIME_S,
  F_DEV,
  F_INO_HI,
  F_INO_LO,
  F_MTIME_NS,
  F_MTIME_S,
  F_SIZE,
} from './dir-layout.js';

/** Entries the arrays hold before they first grow: an idle server keeps a few hundred KB. */
const FIRST_CAPACITY = 4096;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const UINT32_LIMIT = 2 ** 32;

/** Small ids for the few values a field can take, so an entry holds a number, not a string. */
class IdTable {
  private readonly ids = new Map<string | number, number>();
  // A listing asks about one device and mostly one MIME type in a row: one lookup saved per entry.
  private lastValue: string | number | undefined;
  private lastId = 0;
  constructor(private readonly limit: number) {}
  /** The id of `value` (from 1), or 0 once the table is full. */
  idOf(value: string | number): number {
    if (value === this.lastValue) return this.lastId;
    let id = this.ids.get(value);
    if (id === undefined) {
      if (this.ids.size >= this.limit) return 0;
      id = this.ids.size + 1;
      this.ids.set(value, id);
    }
    this.lastValue = value;
    this.lastId = id;
    return id;
  }
  /** The id of `value` if it has one, else 0. */
  find(value: string | number): number {
    if (value === this.lastValue) return this.lastId;
    const id = this.ids.get(value);
    if (id === undefined) return 0;
    this.lastValue = value;
    this.lastId = id;
    return id;
  }
  clear(): void {
    this.ids.clear();
    this.lastValue = undefined;
    this.lastId = 0;
  }
}

/** Type ids: 0 marks an entry that answers nothing (free or forgotten). */
const typeId = (type: FileType): number => FILE_TYPES.indexOf(type as (typeof FILE_TYPES)[number]) + 1;

/**
 * Types found by reading files' first 512 bytes, so a folder listed again does not open its files
 * again; small enough to hold every header-typed file of a folder of a few hundred thousand.
 *
 * An entry is keyed by the file's device and inode (numbers the snapshot already has, where a path
 * would be a string per file) and answers only while the file's size, mtime and ctime, and the
 * MIME type its name gives, are those it was found for: a rewrite changes the size or the times,
 * a replacement by rename the inode and ctime, `touch -d` to an old mtime still moves ctime, and a
 * rename to another extension or a hard link under another name changes the MIME type the header
 * is judged with. Entries live in typed arrays, about 42 bytes each with the hash index (a
 * `Map` of paths to objects took about 300), and the arrays grow as entries come. Once
 * `capacity` is reached, entries not asked for since the clock hand last passed go first
 * (CLOCK, an approximation of least recently used that needs one byte per entry).
 *
 * File times have the granularity of the kernel's clock tick, so two writes of the same size
 * within one tick can leave identical times. A file changed less than `settleMs` ago is therefore
 * not cached (git's "racily clean" rule): it is read again until its times are safely in the past.
 * Versions whose numbers do not fit the arrays (sizes from 4 GiB, times outside 1901–2038) are not
 * cached either: they are rare, and reading a header again is always correct.
 */
export class TypeCache {
  private devices = new IdTable(0xffff);
  private mimes = new IdTable(0xffff);
  private allocated = 0;
  /** Entries in use, live or forgotten; ids below this are taken. */
  private used = 0;
  private live = 0;
  private hand = 0;
  private slots = new Int32Array(0);
  private mask = 0;
  private dev = new Uint16Array(0);
  private inoHi = new Uint32Array(0);
  private inoLo = new Uint32Array(0);
  private mime = new Uint16Array(0);
  private fileSize = new Uint32Array(0);
  private mtimeS = new Int32Array(0);
  private mtimeNs = new Uint32Array(0);
  private ctimeS = new Int32Array(0);
  private ctimeNs = new Uint32Array(0);
  private type = new Uint8Array(0);
  private recent = new Uint8Array(0);

  constructor(
    readonly capacity = 262_144,
    private readonly nowMs: () => number = Date.now,
    private readonly settleMs = 2000,
  ) {}

  /** Entries that answer. */
  get size(): number {
    return this.live;
  }

  /** Bytes the arrays take. */
  get bytes(): number {
    return this.allocated * 34 + this.slots.byteLength;
  }

  /** The cached type of entry `index` of `data`, named so that its MIME type is `mime`. */
  get(data: Float64Array, index: number, mime: string): FileType | undefined {
    const e = this.find(data, index * FIELDS);
    if (e < 0 || this.type[e] === 0) return undefined;
    if (!this.matches(e, data, index * FIELDS, mime)) {
      this.forget(e);
      return undefined;
    }
    this.recent[e] = 1;
    return FILE_TYPES[this.type[e]! - 1];
  }

  /** Whether entry `index` of `data` last changed long enough ago for its times to identify its bytes. */
  settled(data: Float64Array, index: number): boolean {
    const base = index * FIELDS;
    const limit = this.nowMs() - this.settleMs;
    const ms = (s: number, ns: number) => s * 1000 + ns / 1e6;
    return (
      ms(data[base + F_MTIME_S]!, data[base + F_MTIME_NS]!) <= limit &&
      ms(data[base + F_CTIME_S]!, data[base + F_CTIME_NS]!) <= limit
    );
  }

  set(data: Float64Array, index: number, mime: string, type: FileType): void {
    const base = index * FIELDS;
    let e = this.find(data, base);
    if (e >= 0) this.forget(e);
    if (this.capacity <= 0 || !this.settled(data, index) || !fits(data, base)) return;
    const t = typeId(type);
    const devId = this.devices.idOf(data[base + F_DEV]!);
    const mimeId = this.mimes.idOf(mime);
    if (t === 0 || devId === 0 || mimeId === 0) return;
    if (e < 0) {
      e = this.take();
      this.dev[e] = devId;
      this.inoHi[e] = data[base + F_INO_HI]!;
      this.inoLo[e] = data[base + F_INO_LO]!;
      this.insert(e);
    }
    this.mime[e] = mimeId;
    this.fileSize[e] = data[base + F_SIZE]!;
    this.mtimeS[e] = data[base + F_MTIME_S]!;
    this.mtimeNs[e] = data[base + F_MTIME_NS]!;
    this.ctimeS[e] = data[base + F_CTIME_S]!;
    this.ctimeNs[e] = data[base + F_CTIME_NS]!;
    this.type[e] = t;
    this.recent[e] = 1;
    this.live++;
  }

  clear(): void {
    this.devices.clear();
    this.mimes.clear();
    this.allocated = this.used = this.live = this.hand = 0;
    this.resize(0);
  }

  private matches(e: number, data: Float64Array, base: number, mime: string): boolean {
    return (
      this.fileSize[e] === data[base + F_SIZE] &&
      this.mtimeS[e] === data[base + F_MTIME_S] &&
      this.mtimeNs[e] === data[base + F_MTIME_NS] &&
      this.ctimeS[e] === data[base + F_CTIME_S] &&
      this.ctimeNs[e] === data[base + F_CTIME_NS] &&
      this.mime[e] === this.mimes.find(mime)
    );
  }

  private forget(e: number): void {
    if (this.type[e] === 0) return;
    this.type[e] = 0;
    this.recent[e] = 0;
    this.live--;
  }

  private home(devId: number, hi: number, lo: number): number {
    let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) ^ Math.imul(devId, 0xc2b2ae35);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    return (h ^ (h >>> 12)) & this.mask;
  }

  /** The entry of the file at `base` of `data`, or -1. */
  private find(data: Float64Array, base: number): number {
    if (this.used === 0) return -1;
    const devId = this.devices.find(data[base + F_DEV]!);
    if (devId === 0) return -1;
    const hi = data[base + F_INO_HI]!;
    const lo = data[base + F_INO_LO]!;
    for (let s = this.home(devId, hi, lo); ; s = (s + 1) & this.mask) {
      const slot = this.slots[s]!;
      if (slot === 0) return -1;
      const e = slot - 1;
      if (this.inoLo[e] === lo && this.inoHi[e] === hi && this.dev[e] === devId) return e;
    }
  }

  private insert(e: number): void {
    let s = this.home(this.dev[e]!, this.inoHi[e]!, this.inoLo[e]!);
    while (this.slots[s] !== 0) s = (s + 1) & this.mask;
    this.slots[s] = e + 1;
  }

  /** Takes `e` out of the index, moving later entries of its probe run back (no tombstones). */
  private unindex(e: number): void {
    const mask = this.mask;
    let hole = this.home(this.dev[e]!, this.inoHi[e]!, this.inoLo[e]!);
    while (this.slots[hole] !== e + 1) hole = (hole + 1) & mask;
    for (let s = (hole + 1) & mask; this.slots[s] !== 0; s = (s + 1) & mask) {
      const other = this.slots[s]! - 1;
      const home = this.home(this.dev[other]!, this.inoHi[other]!, this.inoLo[other]!);
      // The entry may fill the hole unless its home lies cyclically in (hole, s].
      const between = hole <= s ? home > hole && home <= s : home > hole || home <= s;
      if (!between) {
        this.slots[hole] = this.slots[s]!;
        hole = s;
      }
    }
    this.slots[hole] = 0;
  }

  /** A free entry: a new one while there is room, else the one the clock hand evicts. */
  private take(): number {
    if (this.used < this.capacity) {
      if (this.used === this.allocated)
        this.resize(Math.min(this.capacity, Math.max(FIRST_CAPACITY, this.allocated * 2)));
      return this.used++;
    }
    for (;;) {
      const e = this.hand;
      this.hand = (this.hand + 1) % this.used;
      if (this.recent[e] === 1) {
        this.recent[e] = 0;
        continue;
      }
      if (this.type[e] !== 0) this.live--;
      this.type[e] = 0;
      this.unindex(e);
      return e;
    }
  }

  private resize(entries: number): void {
    const grow = <T extends Uint8Array | Uint16Array | Uint32Array | Int32Array>(
      old: T,
      make: (n: number) => T,
    ) => {
      const next = make(entries);
      next.set(old.subarray(0, Math.min(old.length, entries)));
      return next;
    };
    this.dev = grow(this.dev, (n) => new Uint16Array(n));
    this.inoHi = grow(this.inoHi, (n) => new Uint32Array(n));
    this.inoLo = grow(this.inoLo, (n) => new Uint32Array(n));
    this.mime = grow(this.mime, (n) => new Uint16Array(n));
    this.fileSize = grow(this.fileSize, (n) => new Uint32Array(n));
    this.mtimeS = grow(this.mtimeS, (n) => new Int32Array(n));
    this.mtimeNs = grow(this.mtimeNs, (n) => new Uint32Array(n));
    this.ctimeS = grow(this.ctimeS, (n) => new Int32Array(n));
    this.ctimeNs = grow(this.ctimeNs, (n) => new Uint32Array(n));
    this.type = grow(this.type, (n) => new Uint8Array(n));
    this.recent = grow(this.recent, (n) => new Uint8Array(n));
    this.allocated = entries;
    // A load of at most one half keeps probe runs short.
    let slots = 1;
    while (slots < entries * 2) slots *= 2;
    this.slots = new Int32Array(entries === 0 ? 0 : slots);
    this.mask = slots - 1;
    for (let e = 0; e < this.used; e++) this.insert(e);
  }
}

/** Whether the version of the file at `base` fits the cache's arrays. */
function fits(data: Float64Array, base: number): boolean {
  const inInt32 = (v: number) => v >= INT32_MIN && v <= INT32_MAX;
  return (
    data[base + F_SIZE]! < UINT32_LIMIT &&
    inInt32(data[base + F_MTIME_S]!) &&
    inInt32(data[base + F_CTIME_S]!) &&
    data[base + F_MTIME_NS]! >= 0 &&
    data[base + F_CTIME_NS]! >= 0
  );
}

/** The process-wide cache of listing types found by header reading. */
export const headerTypes = new TypeCache();
