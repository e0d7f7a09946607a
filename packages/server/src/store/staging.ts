import type { Sql } from './sql.js';

/** A staging file a write made beside its target, recorded until the write renamed or removed it. */
export interface StagingRecord {
  id: number;
  /** Real path of the folder it is in. */
  folder: string;
  name: string;
  createdAt: number;
}

/**
 * Staging files in progress. A record outlives its write only when the process died in the
 * middle of it (SIGKILL, a crash, a power cut): the next start finds its file by it and removes it.
 */
export class StagingRepo {
  constructor(
    private readonly sql: Sql,
    /** The instance whose writes these are (instances.id): stamped on every record it adds. */
    private readonly instance: string,
  ) {}

  async add(folder: string, name: string): Promise<number> {
    const row = await this.sql
      .insertInto('staging_files')
      .values({ folder, name, created_at: Date.now(), instance: this.instance })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  async remove(id: number): Promise<void> {
    await this.sql.deleteFrom('staging_files').where('id', '=', id).execute();
  }

  /** The records of writes no running instance is doing: those of every instance but `live`. */
  async orphaned(live: readonly string[]): Promise<StagingRecord[]> {
    let query = this.sql.selectFrom('staging_files').select(['id', 'folder', 'name', 'created_at']);
    if (live.length > 0) query = query.where('instance', 'not in', live);
    const rows = await query.orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, folder: r.folder, name: r.name, createdAt: r.created_at }));
  }
}
