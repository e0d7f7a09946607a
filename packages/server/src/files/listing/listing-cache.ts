import { inflateRawSync } from 'node:zlib';
import { shortLivedBuffer } from '../../buffer-garbage.js';
import type { DirSnapshot } from './dir-snapshot.js';

/**
 * A listing's `items`, `numDirs` and `numFiles` as JSON text (`"items":[…],"numDirs":N,"numFiles":M`,
 * without braces, UTF-8) in the pieces it was sent in, each raw-deflated when `packed`.
 */
export interface ListingText {
  pieces: readonly Buffer[];
  packed: boolean;
  /** Bytes of the text itself (inflated). */
  length: number;
}

/** A listing's text, and the snapshot it was made from. */
interface RenderedListing extends ListingText {
  snapshot: DirSnapshot;
  /** Bytes held. */
  weight: number;
}

/** The one big listing: its text, and the digest of the snapshot it was made from (`DirSnapshot.digest`). */
interface BigListing extends ListingText {
  key: string;
  digest: Buffer;
  lastUsed: number;
}

/**
 * Cached text as it is sent: its length and its pieces, inflated one at a time as they are taken
 * (each reading inflates them anew, so a second reader gets the whole text too).
 */
export interface CachedText {
  length: number;
  pieces: Iterable<Buffer>;
}

/** Not a generator, which a first reader would use up: the packed pieces stay the only copy. */
function inflated(pieces: readonly Buffer[]): Iterable<Buffer> {
  return {
    *[Symbol.iterator]() {
      for (const piece of pieces) {
        const text = inflateRawSync(piece);
        // dead once the socket has it: collected young (a 100,000-entry listing is 17 MB of them)
        shortLivedBuffer(text.length);
        yield text;
      }
    },
  };
}

function cachedText(text: ListingText): CachedText {
  return { length: text.length, pieces: text.packed ? inflated(text.pieces) : text.pieces };
}

export interface ListingCacheOptions {
  /** Bytes the listings of ordinary size may hold together (each at most a quarter of it). */
  maxBytes: number;
  /** Bytes the one big listing may hold, text and snapshot. */
  bigBytes: number;
  /** A big listing not asked for this long is dropped. */
  bigIdleMs: number;
  /** Milliseconds, monotonic. */
  now: () => number;
}

const DEFAULTS: ListingCacheOptions = {
  maxBytes: 24 * 1024 * 1024,
  bigBytes: 32 * 1024 * 1024,
  bigIdleMs: 60_000,
  now: () => performance.now(),
};

/**
 * The JSON of recent listings, so that listing an unchanged folder again costs reading the folder
 * and stat'ing its entries, but not building, sorting and serialising thousands of items again.
 *
 * Nothing is trusted without looking: every request still reads the folder and stats every entry
 * (as nginx's autoindex does), and the cached text is used only when that fresh snapshot is
 * identical to the one the text was made from: the same names in the same order with the same
 * mode, size, mtime, ctime, inode and device. The key holds everything else the text depends on
 * (folder, virtual path, sorting, header reading, the user's rules); listings whose text depends
 * on more than that (symbolic links, subtitle folders, files changed too recently for their
 * times to tell versions apart) are never stored. Least recently used listings go first once the
 * cache holds `maxBytes`.
 *
 * A listing bigger than a quarter of that (a folder of some 20,000 entries and more) would push
 * out all the others, so it gets a place of its own instead: one big listing at a time (up to
 * `bigBytes`), the latest stored replacing the one before, dropped after `bigIdleMs` without
 * being asked for, so the memory is held only while someone keeps coming back to that folder. Of
 * its snapshot only a digest is kept (hashing 9 MB takes a few milliseconds of the hundreds that
 * stat'ing 100,000 entries takes). Streamed listings come packed (each piece raw-deflated at level
 * 1 as it was sent: the 18 MB of 100,000 entries in 1.6 MB), so held, they cost a twelfth of their
 * text; inflating them again costs about 30 ms of a warm listing's 700.
 */
export class ListingCache {
  private readonly entries = new Map<string, RenderedListing>();
  private bytes = 0;
  private big: BigListing | undefined;
  private bigTimer: NodeJS.Timeout | undefined;
  private readonly opts: ListingCacheOptions;

  constructor(opts: Partial<ListingCacheOptions> = {}) {
    this.opts = { ...DEFAULTS, ...opts };
  }

  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  /** Listings held, the big one included. */
  get size(): number {
    return this.entries.size + (this.big ? 1 : 0);
  }

  /** The cached text for `key` if it was made from a snapshot identical to `snapshot`. */
  get(key: string, snapshot: DirSnapshot): CachedText | undefined {
    const big = this.big;
    if (big && big.key === key) {
      if (this.opts.now() - big.lastUsed >= this.opts.bigIdleMs || !snapshot.digest().equals(big.digest)) {
        this.dropBig();
        return undefined;
      }
      big.lastUsed = this.opts.now();
      return cachedText(big);
    }
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (!hit.snapshot.sameAs(snapshot)) {
      this.drop(key, hit);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, hit);
    return cachedText(hit);
  }

  /** Stores `text` made from `snapshot`, which the cache then owns (see `DirSnapshot.release`). */
  set(key: string, snapshot: DirSnapshot, text: ListingText): void {
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    if (this.big?.key === key) this.dropBig();
    let weight = snapshot.weight;
    for (const piece of text.pieces) weight += piece.length;
    snapshot.forgetNames();
    const listing = { ...text, snapshot, weight };
    if (weight > this.opts.maxBytes / 4) {
      if (weight > this.opts.bigBytes) {
        snapshot.release();
        return;
      }
      this.dropBig();
      // Its digest stands in for the snapshot, whose buffers go back to their thread at once.
      const digest = snapshot.digest();
      snapshot.release();
      this.big = { ...text, key, digest, lastUsed: this.opts.now() };
      this.armBigTimer();
      return;
    }
    while (this.bytes + weight > this.opts.maxBytes) {
      const oldest = this.entries.entries().next();
      if (oldest.done) break;
      this.drop(oldest.value[0], oldest.value[1]);
    }
    this.entries.set(key, listing);
    this.bytes += weight;
  }

  /** Whether a listing of about `weight` bytes could be stored (so a streamed one is worth keeping). */
  fits(weight: number): boolean {
    return weight <= Math.max(this.opts.maxBytes / 4, this.opts.bigBytes);
  }

  /** Drops the big listing once it has not been asked for in `bigIdleMs`, without waiting for a request. */
  private armBigTimer(): void {
    clearTimeout(this.bigTimer);
    const big = this.big;
    if (!big) return;
    const left = big.lastUsed + this.opts.bigIdleMs - this.opts.now();
    this.bigTimer = setTimeout(
      () => {
        if (this.big !== big) return;
        if (this.opts.now() - big.lastUsed >= this.opts.bigIdleMs) this.dropBig();
        else this.armBigTimer();
      },
      Math.max(0, left),
    );
    this.bigTimer.unref();
  }

  private dropBig(): void {
    clearTimeout(this.bigTimer);
    this.big = undefined;
  }

  private drop(key: string, entry: RenderedListing): void {
    this.entries.delete(key);
    this.bytes -= entry.weight;
    entry.snapshot.release();
  }

  clear(): void {
    for (const [key, entry] of [...this.entries]) this.drop(key, entry);
    this.dropBig();
  }
}

/** The process-wide cache of rendered listings. */
export const renderedListings = new ListingCache();
