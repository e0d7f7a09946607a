import type { Logger } from '../../context.js';
import type { Repos, Store } from '../../store/index.js';
import type { MoveRecord, MovesRepo } from '../../store/moves.js';
import { renameEntry, statEntry, type Pinned } from '../access/anchor.js';
import { atRecordedFolder } from '../access/reach.js';
import { stagingName } from '../access/staging-names.js';
import { removeTree } from '../access/tree.js';
import { renameInto } from './rename-into.js';

/**
 * Moves across file systems, where no rename can move an entry (a mount inside the root, the
 * trash on another disk). They copy, then switch, and a record in the database (`store/moves.ts`)
 * says how far each one came, so that a process killed at any point leaves nothing half done to
 * the next start:
 *
 * 1. `copying`: the copy is made under a staging name beside the destination. Nobody sees it
 *    (staging names are hidden everywhere) and the source is untouched. A start finding a move
 *    here removes the copy: the move never happened.
 * 2. `copied`: the copy is whole. The staging name is renamed onto the destination (one atomic
 *    rename on the destination's file system), then the source is renamed to a hidden staging name
 *    beside it (one atomic rename on its file system) and removed from there. A start finding a
 *    move here does what is left of that. A folder being removed is never visible half empty.
 */
export class MoveJournal {
  private readonly repo: MovesRepo;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {
    this.repo = store.moves;
  }

  /** Records a move before its copy begins; the copy goes to the answer's `stagingName` in `to`. */
  async begin(from: Pinned, name: string, to: Pinned, toName: string): Promise<JournaledMove> {
    const record = {
      sourceFolder: from.real,
      sourceName: name,
      sourceId: identity(await statEntry(from, name)),
      hiddenName: stagingName(name),
      destFolder: to.real,
      stagingName: stagingName(toName),
      destName: toName,
    };
    const id = await this.repo.add(record);
    return new JournaledMove(
      this.store,
      this.log,
      id,
      from,
      name,
      record.hiddenName,
      to,
      toName,
      record.stagingName,
    );
  }

  /**
   * Finishes or undoes the moves of instances that are gone (earlier processes, or instances on
   * the same database that died), and forgets them: every instance not in `live` will never go
   * on with its moves by itself. At start, before any request, `live` is this instance alone.
   */
  async recover(live: readonly string[]): Promise<number> {
    const log = this.log;
    const records = await this.repo.orphaned(live);
    for (const record of records) {
      try {
        if (record.phase === 'copying') await undoCopy(record);
        else await finishMove(record, log);
      } catch (err) {
        log.warn(
          { err, from: record.sourceFolder, to: record.destFolder },
          'a move across file systems left by an earlier process could not be finished or undone',
        );
      }
      await this.repo.remove(record.id);
    }
    if (records.length > 0)
      log.info(
        `finished or undid ${records.length} move${records.length === 1 ? '' : 's'} across file systems left by an earlier process`,
      );
    return records.length;
  }
}

/** One move across file systems in progress, from its record to its end. */
export class JournaledMove {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly id: number,
    private readonly from: Pinned,
    private readonly name: string,
    private readonly hiddenName: string,
    private readonly to: Pinned,
    private readonly toName: string,
    /** Where the copy is made, beside the destination. */
    readonly stagingName: string,
  ) {}

  /** The copy failed: what it made goes, the source stays, the record is forgotten. */
  async undo(): Promise<void> {
    await removeTree(this.to, this.stagingName).catch(() => undefined);
    await this.store.moves.remove(this.id);
  }

  /**
   * The copy is whole: `alongside` runs in the transaction that records so (records that belong
   * with the finished move), then the copy takes the destination's name and the source goes.
   */
  async finish(alongside?: (tx: Repos) => Promise<unknown>, replace = false): Promise<void> {
    try {
      await this.store.transaction(async (tx) => {
        await tx.moves.markCopied(this.id);
        await alongside?.(tx);
      });
    } catch (err) {
      await this.undo();
      throw err;
    }
    try {
      await renameInto(this.to, this.stagingName, this.to, this.toName, replace);
    } catch (err) {
      // Nothing can take the destination's name (a folder over a file, something that took the
      // name meanwhile): the move is undone.
      await this.undo();
      throw err;
    }
    await this.removeSource();
  }

  /** Hides the source (one rename), then removes it and forgets the move. */
  private async removeSource(): Promise<void> {
    try {
      await renameEntry(this.from, this.name, this.from, this.hiddenName);
      await removeTree(this.from, this.hiddenName);
    } catch (err) {
      // The move itself is done; the record stays, and the next start removes what is left.
      this.log.warn(
        { err, folder: this.from.real },
        'the source of a move across file systems could not be removed yet: the next start retries',
      );
      return;
    }
    await this.store.moves.remove(this.id);
  }
}

async function undoCopy(record: MoveRecord): Promise<void> {
  await atRecordedFolder(record.destFolder, (folder) => removeTree(folder, record.stagingName));
}

async function finishMove(record: MoveRecord, log: Logger): Promise<void> {
  const switched = await atRecordedFolder(record.destFolder, async (folder) => {
    const copy = await folder.lookup(record.stagingName);
    if (copy) {
      await copy.close();
      await renameEntry(folder, record.stagingName, folder, record.destName);
      return true;
    }
    // Renamed before the process died, or the destination is not there at all.
    const dest = await folder.lookup(record.destName);
    await dest?.close();
    return !!dest;
  });
  if (!switched) {
    // Without the copy in place, the source is the only one left: it stays.
    log.warn(
      { to: record.destFolder },
      'a move across file systems found no copy to finish with: the source stays',
    );
    return;
  }
  await atRecordedFolder(record.sourceFolder, async (folder) => {
    const source = await statEntry(folder, record.sourceName).catch(() => undefined);
    if (source && identity(source) === record.sourceId) {
      await renameEntry(folder, record.sourceName, folder, record.hiddenName);
    } else if (source) {
      // Something else has the name now (a database restored from a backup, say): not ours.
      log.warn(
        { folder: record.sourceFolder },
        'the source of an unfinished move is no longer there: nothing removed',
      );
    }
    await removeTree(folder, record.hiddenName);
  });
}

/**
 * What tells one file-system object from another that later takes its name: an inode number is
 * given again once freed, its birth time (where the file system keeps one) is not.
 */
function identity(st: { dev: bigint; ino: bigint; birthtimeNs: bigint }): string {
  return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
}

const journals = new WeakMap<Store, MoveJournal>();

/** The journal of a store's database (one per store; it logs to the first logger it is given). */
export function moveJournalOf(store: Store, log: Logger): MoveJournal {
  let journal = journals.get(store);
  if (!journal) {
    journal = new MoveJournal(store, log);
    journals.set(store, journal);
  }
  return journal;
}
