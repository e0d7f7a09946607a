import type { Db } from './db.js';

/** The bytes one scope's tree holds (the trash not included: its records say what it holds). */
export interface ScopeUsage {
  rootId: string;
  /** The scope's place below the root (`/users/bob`, `/` for the whole root). */
  scope: string;
  bytes: number;
  /** Unix ms of the walk the count started from. */
  countedAt: number;
}

interface Row {
  root_id: string;
  scope: string;
  bytes: number;
  counted_at: number;
}

const fromRow = (r: Row): ScopeUsage => ({
  rootId: r.root_id,
  scope: r.scope,
  bytes: r.bytes,
  countedAt: r.counted_at,
});

/** Counted scopes (files/quota.ts keeps them current between walks). */
export class ScopeUsageRepo {
  constructor(private readonly db: Db) {}

  all(): ScopeUsage[] {
    return (this.db.prepare('SELECT * FROM scope_usage ORDER BY root_id, scope').all() as Row[]).map(fromRow);
  }

  get(rootId: string, scope: string): ScopeUsage | undefined {
    const row = this.db
      .prepare('SELECT * FROM scope_usage WHERE root_id = ? AND scope = ?')
      .get(rootId, scope) as Row | undefined;
    return row && fromRow(row);
  }

  /** Records the result of a walk. */
  set(usage: ScopeUsage): void {
    this.db
      .prepare(
        `INSERT INTO scope_usage (root_id, scope, bytes, counted_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(root_id, scope) DO UPDATE SET bytes = excluded.bytes, counted_at = excluded.counted_at`,
      )
      .run(usage.rootId, usage.scope, usage.bytes, usage.countedAt);
  }

  /** Adds `delta` bytes to each of `scopes` of a root in one transaction (never below zero). */
  add(rootId: string, scopes: readonly string[], delta: number): void {
    const update = this.db.prepare(
      'UPDATE scope_usage SET bytes = MAX(0, bytes + ?) WHERE root_id = ? AND scope = ?',
    );
    this.db.transaction(() => {
      for (const scope of scopes) update.run(delta, rootId, scope);
    })();
  }

  delete(rootId: string, scope: string): void {
    this.db.prepare('DELETE FROM scope_usage WHERE root_id = ? AND scope = ?').run(rootId, scope);
  }
}
