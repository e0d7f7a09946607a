import type { Logger } from '../../context.js';
import type { Store } from '../../store/index.js';
import type { StagingRepo } from '../../store/staging.js';
import { unlinkEntry, type Pinned } from '../access/anchor.js';
import { atRecordedFolder } from '../access/reach.js';
import { isStagingName } from '../access/staging-names.js';
import { oncePerStore } from '../../store/once-per-store.js';

/**
 * The staging files of writes in progress, recorded in the database until each write is done,
 * so that one left by a process that died mid-write is removed at the next start.
 */
export class StagingLedger {
  constructor(private readonly repo: StagingRepo) {}

  /**
   * Records `name` in `folder` before the file is made; the returned function forgets it once
   * the write renamed or removed it.
   */
  async note(folder: Pinned, name: string): Promise<() => Promise<void>> {
    const id = await this.repo.add(folder.real, name);
    return async () => {
      try {
        await this.repo.remove(id);
      } catch {
        // A record left over is harmless: the next start finds no file by it and forgets it.
      }
    };
  }

  /**
   * Removes the staging files left by writes of instances that are gone (earlier processes, or
   * instances on the same database that died), and forgets them: no instance outside `live` will
   * finish its writes. At start, before any request, `live` is this instance alone. A folder
   * is reached from `/` one entry at a time without following a link, so a link planted in its
   * place since leads nowhere.
   */
  async sweep(log: Logger, live: readonly string[]): Promise<number> {
    let removed = 0;
    for (const record of await this.repo.orphaned(live)) {
      try {
        if (await removeStaging(record.folder, record.name)) removed++;
      } catch (err) {
        log.warn(
          { err, folder: record.folder },
          'a staging file left by an earlier process could not be removed',
        );
      }
      await this.repo.remove(record.id);
    }
    if (removed > 0)
      log.info(`removed ${removed} staging file${removed === 1 ? '' : 's'} left by an earlier process`);
    return removed;
  }
}

async function removeStaging(folderReal: string, name: string): Promise<boolean> {
  if (!isStagingName(name)) return false;
  const removed = await atRecordedFolder(folderReal, async (folder) => {
    const entry = await folder.lookup(name);
    if (!entry) return false;
    await entry.close();
    if (!entry.stat.isFile()) return false;
    await unlinkEntry(folder, name);
    return true;
  });
  return removed ?? false;
}

const ledgers = oncePerStore<StagingLedger>();

/** The ledger of a store's database (one per store). */
export function stagingLedgerOf(store: Store): StagingLedger {
  return ledgers(store, () => new StagingLedger(store.staging));
}
