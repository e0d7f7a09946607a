import type { Sql } from './sql.js';

/**
 * Where a move across file systems stands. `copying`: the copy is being made under a staging name
 * beside the destination, and the source is untouched. `copied`: the copy is whole; what is left
 * is the switch (one rename of the staging name onto the destination) and the source's removal.
 */
export type MovePhase = 'copying' | 'copied';

/** A move across file systems in progress (folders are real paths, names single entries). */
export interface MoveRecord {
  id: number;
  sourceFolder: string;
  sourceName: string;
  /** Device, inode and birth time of the source: a start removes nothing else that has its name by then. */
  sourceId: string;
  /** The hidden name the source takes before it is removed (same folder: one atomic rename). */
  hiddenName: string;
  destFolder: string;
  /** The copy's name beside the destination until the switch. */
  stagingName: string;
  destName: string;
  phase: MovePhase;
  createdAt: number;
}

/**
 * The journal of moves across file systems. A record outlives its move only when the process died
 * in the middle of it: the next start reads the phase and finishes or undoes the move.
 */
export class MovesRepo {
  constructor(
    private readonly sql: Sql,
    /** The instance whose moves these are (instances.id): stamped on every record it adds. */
    private readonly instance: string,
  ) {}

  async add(move: Omit<MoveRecord, 'id' | 'phase' | 'createdAt'>): Promise<number> {
    const row = await this.sql
      .insertInto('moves')
      .values({
        source_folder: move.sourceFolder,
        source_name: move.sourceName,
        source_id: move.sourceId,
        hidden_name: move.hiddenName,
        dest_folder: move.destFolder,
        staging_name: move.stagingName,
        dest_name: move.destName,
        phase: 'copying',
        created_at: Date.now(),
        instance: this.instance,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  /** Marks the copy whole (with what belongs with it, in one transaction: see files/change/moves.ts). */
  async markCopied(id: number): Promise<void> {
    await this.sql.updateTable('moves').set({ phase: 'copied' }).where('id', '=', id).execute();
  }

  async remove(id: number): Promise<void> {
    await this.sql.deleteFrom('moves').where('id', '=', id).execute();
  }

  /** The records of moves no running instance is doing: those of every instance but `live`. */
  async orphaned(live: readonly string[]): Promise<MoveRecord[]> {
    let query = this.sql.selectFrom('moves').selectAll();
    if (live.length > 0) query = query.where('instance', 'not in', live);
    const rows = await query.orderBy('id').execute();
    return rows.map((r) => ({
      id: Number(r.id),
      sourceFolder: r.source_folder,
      sourceName: r.source_name,
      sourceId: r.source_id,
      hiddenName: r.hidden_name,
      destFolder: r.dest_folder,
      stagingName: r.staging_name,
      destName: r.dest_name,
      phase: r.phase === 'copied' ? 'copied' : 'copying',
      createdAt: r.created_at,
    }));
  }
}
