import type { Sortable } from '../../files/listing/sort.js';

const SIZE = 0;
const MTIME_SEC = 1;
const MTIME_NSEC = 2;
const FIELDS = 3;

/**
 * A folder's listed members as PROPFIND needs them while its answer is written: the names, and
 * the numbers in one typed array outside the heap. The listing's row objects live until the last
 * member is written; a 10,000-entry answer takes dozens of young collections, so they (and the
 * per-member objects that used to be made from them, with their href and place strings) were
 * promoted to the old generation, about 5 MB a request, and filled it to its limit every two or
 * three PROPFINDs. Copied here at once, the rows die young; what is left for the old generation
 * is the array of names.
 */
export class Members {
  private constructor(
    private readonly names: string[],
    private readonly numbers: Float64Array,
    private readonly dirs: Uint8Array,
  ) {}

  static of(rows: readonly Sortable[]): Members {
    const names = new Array<string>(rows.length);
    const numbers = new Float64Array(rows.length * FIELDS);
    const dirs = new Uint8Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      names[i] = row.name;
      numbers[i * FIELDS + SIZE] = row.size;
      numbers[i * FIELDS + MTIME_SEC] = row.mtimeSec;
      numbers[i * FIELDS + MTIME_NSEC] = row.mtimeNsec;
      dirs[i] = row.isDir ? 1 : 0;
    }
    return new Members(names, numbers, dirs);
  }

  static readonly none = new Members([], new Float64Array(0), new Uint8Array(0));

  get length(): number {
    return this.names.length;
  }

  name(i: number): string {
    return this.names[i]!;
  }

  isDir(i: number): boolean {
    return this.dirs[i] === 1;
  }

  size(i: number): number {
    return this.numbers[i * FIELDS + SIZE]!;
  }

  mtimeSec(i: number): number {
    return this.numbers[i * FIELDS + MTIME_SEC]!;
  }

  mtimeNsec(i: number): number {
    return this.numbers[i * FIELDS + MTIME_NSEC]!;
  }
}
