import type { FileType } from '@filebrowser/contract';
import { FIELDS, F_CTIME_NS, F_CTIME_S, F_DEV, F_MTIME_NS, F_MTIME_S, F_SIZE } from './dir-layout.js';

/** The fields of a snapshot entry (see `DirSnapshot`) that tell one version of a file from another. */
const VERSION_FROM = F_SIZE;
const VERSION_TO = F_DEV + 1;

interface Entry {
  version: Float64Array;
  type: FileType;
}

/**
 * Types found by reading files' first 512 bytes, so a folder listed again does not open its files
 * again. Keyed by real path; an entry counts only while the file's size, mtime, ctime, inode and
 * device are unchanged (a rewrite changes the size or the times, a replacement by rename the inode
 * and ctime, and `touch -d` to an old mtime still moves ctime). Least recently used entries go
 * first once `capacity` is reached.
 *
 * File times have the granularity of the kernel's clock tick, so two writes of the same size
 * within one tick can leave identical times. A file changed less than `settleMs` ago is therefore
 * not cached (git's "racily clean" rule): it is read again until its times are safely in the past.
 */
export class TypeCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly capacity = 20_000,
    private readonly nowMs: () => number = Date.now,
    private readonly settleMs = 2000,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached type of `realPath` if entry `index` of `data` is the version it was found for. */
  get(realPath: string, data: Float64Array, index: number): FileType | undefined {
    const e = this.entries.get(realPath);
    if (!e) return undefined;
    const base = index * FIELDS;
    for (let f = VERSION_FROM; f < VERSION_TO; f++) {
      if (e.version[f - VERSION_FROM] !== data[base + f]) {
        this.entries.delete(realPath);
        return undefined;
      }
    }
    // Refresh its place in the eviction order (a Map iterates in insertion order).
    this.entries.delete(realPath);
    this.entries.set(realPath, e);
    return e.type;
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

  set(realPath: string, data: Float64Array, index: number, type: FileType): void {
    this.entries.delete(realPath);
    if (this.capacity <= 0 || !this.settled(data, index)) return;
    const base = index * FIELDS;
    while (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(realPath, {
      version: data.slice(base + VERSION_FROM, base + VERSION_TO),
      type,
    });
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The process-wide cache of listing types found by header reading. */
export const headerTypes = new TypeCache();
