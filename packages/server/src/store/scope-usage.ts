import { sql } from 'kysely';
import type { ScopeUsageTable } from './schema.js';
import type { Sql } from './sql.js';

/** The bytes one scope's tree holds (the trash not included: its records say what it holds). */
export interface ScopeUsage {
  rootId: string;
  /** The scope's place below the root (`/users/bob`, `/` for the whole root). */
  scope: string;
  bytes: number;
  /** Unix ms of the walk the count started from. */
  countedAt: number;
}

const fromRow = (r: ScopeUsageTable): ScopeUsage => ({
  rootId: r.root_id,
  scope: r.scope,
  bytes: r.bytes,
  countedAt: r.counted_at,
});

/** Counted scopes (files/quota.ts keeps them current between walks). */
export class ScopeUsageRepo {
  constructor(private readonly sql: Sql) {}

  async all(): Promise<ScopeUsage[]> {
    return (
      await this.sql.selectFrom('scope_usage').selectAll().orderBy('root_id').orderBy('scope').execute()
    ).map(fromRow);
  }

  async get(rootId: string, scope: string): Promise<ScopeUsage | undefined> {
    const row = await this.sql
      .selectFrom('scope_usage')
      .selectAll()
      .where('root_id', '=', rootId)
      .where('scope', '=', scope)
      .executeTakeFirst();
    return row && fromRow(row);
  }

  /** Records the result of a walk. */
  async set(usage: ScopeUsage): Promise<void> {
    await this.sql
      .insertInto('scope_usage')
      .values({ root_id: usage.rootId, scope: usage.scope, bytes: usage.bytes, counted_at: usage.countedAt })
      .onConflict((oc) =>
        oc.columns(['root_id', 'scope']).doUpdateSet({ bytes: usage.bytes, counted_at: usage.countedAt }),
      )
      .execute();
  }

  /** Adds `delta` bytes to each of `scopes` of a root in one statement (never below zero). */
  async add(rootId: string, scopes: readonly string[], delta: number): Promise<void> {
    if (scopes.length === 0) return;
    await this.sql
      .updateTable('scope_usage')
      .set({ bytes: sql<number>`CASE WHEN bytes + ${delta} < 0 THEN 0 ELSE bytes + ${delta} END` })
      .where('root_id', '=', rootId)
      .where('scope', 'in', [...scopes])
      .execute();
  }

  async delete(rootId: string, scope: string): Promise<void> {
    await this.sql
      .deleteFrom('scope_usage')
      .where('root_id', '=', rootId)
      .where('scope', '=', scope)
      .execute();
  }
}
