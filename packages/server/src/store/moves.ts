import type { Db } from './db.js';

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

interface Row {
  id: number;
  source_folder: string;
  source_name: string;
  source_id: string;
  hidden_name: string;
  dest_folder: string;
  staging_name: string;
  dest_name: string;
  phase: string;
  created_at: number;
}

/**
 * The journal of moves across file systems. A record outlives its move only when the process died
 * in the middle of it: the next start reads the phase and finishes or undoes the move.
 */
export class MovesRepo {
  constructor(private readonly db: Db) {}

  add(move: Omit<MoveRecord, 'id' | 'phase' | 'createdAt'>): number {
    const result = this.db
      .prepare(
        `INSERT INTO moves (source_folder, source_name, source_id, hidden_name, dest_folder, staging_name, dest_name, phase, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'copying', ?)`,
      )
      .run(
        move.sourceFolder,
        move.sourceName,
        move.sourceId,
        move.hiddenName,
        move.destFolder,
        move.stagingName,
        move.destName,
        Date.now(),
      );
    return Number(result.lastInsertRowid);
  }

  /**
   * Marks the copy whole, and runs `alongside` (other records that belong with the finished copy)
   * in the same transaction: after a crash, both happened or neither did.
   */
  markCopied(id: number, alongside: () => void = () => undefined): void {
    this.db.transaction(() => {
      this.db.prepare(`UPDATE moves SET phase = 'copied' WHERE id = ?`).run(id);
      alongside();
    })();
  }

  remove(id: number): void {
    this.db.prepare('DELETE FROM moves WHERE id = ?').run(id);
  }

  all(): MoveRecord[] {
    const rows = this.db
      .prepare(
        `SELECT id, source_folder, source_name, source_id, hidden_name, dest_folder, staging_name, dest_name, phase, created_at
         FROM moves ORDER BY id`,
      )
      .all() as Row[];
    return rows.map((r) => ({
      id: r.id,
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
