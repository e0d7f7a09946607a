import type { Db } from './db.js';

/** A staging file a write made beside its target, recorded until the write renamed or removed it. */
export interface StagingRecord {
  id: number;
  /** Real path of the folder it is in. */
  folder: string;
  name: string;
  createdAt: number;
}

interface Row {
  id: number;
  folder: string;
  name: string;
  created_at: number;
}

/**
 * Staging files in progress. A record outlives its write only when the process died in the
 * middle of it (SIGKILL, a crash, a power cut): the next start finds its file by it and removes it.
 */
export class StagingRepo {
  constructor(private readonly db: Db) {}

  add(folder: string, name: string): number {
    const result = this.db
      .prepare('INSERT INTO staging_files (folder, name, created_at) VALUES (?, ?, ?)')
      .run(folder, name, Date.now());
    return Number(result.lastInsertRowid);
  }

  remove(id: number): void {
    this.db.prepare('DELETE FROM staging_files WHERE id = ?').run(id);
  }

  all(): StagingRecord[] {
    const rows = this.db
      .prepare('SELECT id, folder, name, created_at FROM staging_files ORDER BY id')
      .all() as Row[];
    return rows.map((r) => ({ id: r.id, folder: r.folder, name: r.name, createdAt: r.created_at }));
  }
}
