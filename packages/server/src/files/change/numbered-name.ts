import { renameEntry, renameEntryNoReplace, statEntry, type Pinned } from '../access/anchor.js';
import { extensionOf } from '../listing/mime.js';

/** `a.txt` → `a(1).txt`, `a.tar.gz` → `a.tar(1).gz`, `.env` → `(1).env`, `dir` → `dir(1)`. */
export function numberedName(name: string, n: number): string {
  const ext = extensionOf(name);
  return `${name.slice(0, name.length - ext.length)}(${n})${ext}`;
}

/**
 * Renames the entry `from` of a pinned folder to `name`, or to the first free `name(N)` when
 * something has that name: nothing is replaced. Answers the name it took.
 */
export async function renameToFreeName(folder: Pinned, from: string, name: string): Promise<string> {
  for (let n = 0; n < 100_000; n++) {
    const candidate = n === 0 ? name : numberedName(name, n);
    try {
      if (await renameEntryNoReplace(folder, from, folder, candidate)) return candidate;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    // No renameat2 here: onto a name only while it is free as far as one can see.
    if (await statEntry(folder, candidate).catch(() => undefined)) continue;
    await renameEntry(folder, from, folder, candidate);
    return candidate;
  }
  throw new Error(`no free name beside ${name}`);
}
