import { conflict } from '../../errors.js';
import { renameEntry, renameEntryNoReplace, type Pinned } from '../access/anchor.js';

/**
 * Renames an entry into `toName` of a pinned folder. Unless `replace` (the caller saw a file there
 * and may replace it), the name must still be free: whatever took it since the caller looked
 * stays, and the move is refused with 409. Where the file system cannot refuse (no
 * `renameat2`, a folder without the addon), a plain rename is all there is.
 */
export async function renameInto(
  from: Pinned,
  name: string,
  to: Pinned,
  toName: string,
  replace: boolean,
): Promise<void> {
  if (!replace) {
    let placed: boolean;
    try {
      placed = await renameEntryNoReplace(from, name, to, toName);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw conflict('something took the destination’s name meanwhile: nothing was replaced');
      }
      throw err;
    }
    if (placed) return;
  }
  await renameEntry(from, name, to, toName);
}
