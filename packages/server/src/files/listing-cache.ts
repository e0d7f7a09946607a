import type { DirSnapshot } from './dir-snapshot.js';

/** A listing's `items`, `numDirs` and `numFiles` as JSON text, and the snapshot it was made from. */
export interface RenderedListing {
  snapshot: DirSnapshot;
  /** `"items":[…],"numDirs":N,"numFiles":M`, without braces, UTF-8. */
  json: Buffer;
  /** Bytes held. */
  weight: number;
}

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
 * cache holds `maxBytes`; a listing bigger than a quarter of that is never stored.
 */
export class ListingCache {
  private readonly entries = new Map<string, RenderedListing>();
  private bytes = 0;

  constructor(readonly maxBytes = 24 * 1024 * 1024) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached text for `key` if it was made from a snapshot identical to `snapshot`. */
  get(key: string, snapshot: DirSnapshot): Buffer | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (!hit.snapshot.sameAs(snapshot)) {
      this.drop(key, hit);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.json;
  }

  /** Stores `json` made from `snapshot`, which the cache then owns (see `DirSnapshot.release`). */
  set(key: string, snapshot: DirSnapshot, json: Buffer): void {
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    const weight = json.length + snapshot.weight;
    if (weight > this.maxBytes / 4) {
      snapshot.release();
      return;
    }
    while (this.bytes + weight > this.maxBytes) {
      const oldest = this.entries.entries().next();
      if (oldest.done) break;
      this.drop(oldest.value[0], oldest.value[1]);
    }
    this.entries.set(key, { snapshot, json, weight });
    this.bytes += weight;
  }

  private drop(key: string, entry: RenderedListing): void {
    this.entries.delete(key);
    this.bytes -= entry.weight;
    entry.snapshot.release();
  }

  clear(): void {
    for (const [key, entry] of [...this.entries]) this.drop(key, entry);
  }
}

/** The process-wide cache of rendered listings. */
export const renderedListings = new ListingCache();
