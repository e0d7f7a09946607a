import type { Logger } from '../../context.js';
import { conflict } from '../../errors.js';
import type { HeldLock } from '../../store/lock-line.js';
import type { Repos, Store } from '../../store/index.js';
import type { MoveRecord, MovesRepo } from '../../store/moves.js';
import { joinReal, renameEntry, statEntry, type Pinned } from '../access/anchor.js';
import { identity } from '../access/identity.js';
import { atRecordedFolder } from '../access/reach.js';
import { stagingName } from '../access/staging-names.js';
import { removeTree } from '../access/tree.js';
import { renameToFreeName } from './numbered-name.js';
import { renameInto } from './rename-into.js';
import { TakenEntries, settleSource, takenAsAtDestination } from './settle-source.js';
import { oncePerStore } from '../../store/once-per-store.js';

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
 *    beside it (one atomic rename on its file system) and removed from there as far as the copy
 *    took it (`settleSource`): what was put into the source, or changed in it, after the copy read
 *    it gets the source's place back. A start finding a move here does what is left of that. A
 *    folder being removed is never visible half empty.
 */
export class MoveJournal {
  private readonly repo: MovesRepo;
  /** Sources being moved by this process (`begin`): each by one move at a time. */
  private readonly claimed = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {
    this.repo = store.moves;
  }

  /**
   * Records a move before its copy begins; the copy goes to the answer's `stagingName` in `to`.
   * The source is claimed first, in this process and across the instances: a second move of it
   * (a parallel delete into the trash, a parallel restore) is refused with 409 while this one
   * copies, and finds it gone (404) after, rather than make a second copy.
   */
  async begin(from: Pinned, name: string, to: Pinned, toName: string): Promise<JournaledMove> {
    const key = `move:${joinReal(from.real, name)}`;
    const busy = () => conflict('another request is moving this item: try again once it is done');
    if (this.claimed.has(key)) throw busy();
    this.claimed.add(key);
    let lock: HeldLock | undefined;
    const release = async () => {
      this.claimed.delete(key);
      await lock?.release();
      lock = undefined;
    };
    try {
      lock = await this.store.lockLine.tryHold(key);
      if (!lock) throw busy();
      return await this.recorded(from, name, to, toName, release);
    } catch (err) {
      await release();
      throw err;
    }
  }

  private async recorded(
    from: Pinned,
    name: string,
    to: Pinned,
    toName: string,
    release: () => Promise<void>,
  ): Promise<JournaledMove> {
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
    return new JournaledMove(this.store, this.log, id, record, from, to, release);
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
  /** What the copy took, as it was when it read it: only that goes with the source. */
  readonly taken = new TakenEntries();
  /** Where the copy is made, beside the destination. */
  readonly stagingName: string;
  private readonly name: string;
  private readonly toName: string;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly id: number,
    private readonly record: Omit<MoveRecord, 'id' | 'phase' | 'createdAt'>,
    private readonly from: Pinned,
    private readonly to: Pinned,
    /** Lets go of the source's claim (`MoveJournal.begin`). */
    private readonly release: () => Promise<void>,
  ) {
    this.stagingName = record.stagingName;
    this.name = record.sourceName;
    this.toName = record.destName;
  }

  /** The copy failed: what it made goes, the source stays, the record is forgotten. */
  async undo(): Promise<void> {
    try {
      await removeTree(this.to, this.stagingName).catch(() => undefined);
      await this.store.moves.remove(this.id);
    } finally {
      await this.release();
    }
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
    try {
      await this.removeSource();
    } finally {
      await this.release();
    }
  }

  /**
   * Hides the source (one rename) while it is still the entry copied, then removes what the copy
   * took of it (`settleSource`): what was put into it or changed meanwhile gets its place back.
   */
  private async removeSource(): Promise<void> {
    const { from, name, log } = this;
    try {
      const source = await statEntry(from, name).catch(() => undefined);
      if (source && identity(source) === this.record.sourceId) {
        await renameEntry(from, name, from, this.record.hiddenName);
        const kept = await settleSource(from, this.record.hiddenName, name, this.taken.test);
        if (kept !== undefined) keptNotice(log, from.real, kept);
      }
    } catch (err) {
      // The move itself is done; the record stays, and the next start settles what is left.
      log.warn(
        { err, folder: from.real },
        'the source of a move across file systems could not be removed yet: the next start retries',
      );
      return;
    }
    await this.store.moves.remove(this.id);
  }
}

function keptNotice(log: Logger, folder: string, kept: string): void {
  log.info(
    { folder, kept },
    'a move across file systems left in place what was put into its source (or changed) while it was copied',
  );
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
    // Without the copy in place (not made, or its folder renamed since), the source is the only
    // one known: it stays, given back its name if it was already hidden.
    await atRecordedFolder(record.sourceFolder, async (folder) => {
      if (await statEntry(folder, record.hiddenName).catch(() => undefined)) {
        await renameToFreeName(folder, record.hiddenName, record.sourceName);
      }
    });
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
    const kept = await atRecordedFolder(record.destFolder, (dest) =>
      settleSource(folder, record.hiddenName, record.sourceName, takenAsAtDestination(dest, record.destName)),
    );
    if (kept !== undefined) keptNotice(log, record.sourceFolder, kept);
  });
}

const journals = oncePerStore<MoveJournal>();

/** The journal of a store's database (one per store; it logs to the first logger it is given). */
export function moveJournalOf(store: Store, log: Logger): MoveJournal {
  return journals(store, () => new MoveJournal(store, log));
}
