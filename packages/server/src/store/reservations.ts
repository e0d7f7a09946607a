import { sql } from 'kysely';
import { inTransaction, type Sql } from './sql.js';

/** The holder of a pending resumable upload's reservation: any instance may go on with it. */
export const uploadHolder = (id: string): string => `upload:${id}`;

/**
 * What writes in progress hold back from the quotas, per holder and scope: the shared side of the
 * quota ledger on a database several instances use (files/change/quota.ts), so that parallel
 * uploads through different instances cannot pass a quota together. A holder is an instance (its
 * writes in progress, forgotten when it dies) or a pending resumable upload (`uploadHolder`,
 * forgotten when the upload ends, through whichever instance).
 */
export class ReservationsRepo {
  constructor(private readonly sql: Sql) {}

  /**
   * Adds `delta` bytes (negative: gives them back) to `holder`'s hold on each scope, all or none:
   * a change tried again once the database is back (a give-back) is never half applied before.
   */
  async add(holder: string, scopes: readonly string[], delta: number): Promise<void> {
    if (delta === 0) return;
    await inTransaction(this.sql, (tx) => new ReservationsRepo(tx).addEach(holder, scopes, delta));
  }

  private async addEach(holder: string, scopes: readonly string[], delta: number): Promise<void> {
    for (const scope of scopes) {
      await this.sql
        .insertInto('quota_reservations')
        .values({ holder, scope, bytes: delta })
        .onConflict((oc) =>
          oc.columns(['holder', 'scope']).doUpdateSet({
            bytes: sql<number>`quota_reservations.bytes + ${delta}`,
          }),
        )
        .execute();
    }
    if (delta < 0) {
      await this.sql
        .deleteFrom('quota_reservations')
        .where('holder', '=', holder)
        .where('bytes', '<=', 0)
        .execute();
    }
  }

  /** What every holder holds back from `scope`. */
  async total(scope: string): Promise<number> {
    const row = await this.sql
      .selectFrom('quota_reservations')
      .select((eb) => eb.fn.sum<number | string | null>('bytes').as('bytes'))
      .where('scope', '=', scope)
      .executeTakeFirst();
    return Number(row?.bytes ?? 0);
  }

  /** What `holder` holds back from `scope`. */
  async heldBy(holder: string, scope: string): Promise<number> {
    const row = await this.sql
      .selectFrom('quota_reservations')
      .select('bytes')
      .where('holder', '=', holder)
      .where('scope', '=', scope)
      .executeTakeFirst();
    return Number(row?.bytes ?? 0);
  }

  async forget(holder: string): Promise<void> {
    await this.sql.deleteFrom('quota_reservations').where('holder', '=', holder).execute();
  }

  /**
   * Forgets the holds of the uploads that instances not in `live` were creating (their
   * `upload_creations` rows, under the upload's id) and never recorded: nothing will end them.
   * Before those rows go (`UploadCreationsRepo.forgetInstancesBut`).
   */
  async forgetCreationsOfInstancesBut(live: readonly string[]): Promise<void> {
    let dead = this.sql.selectFrom('upload_creations').select(sql<string>`'upload:' || id`.as('holder'));
    if (live.length > 0) dead = dead.where('instance', 'not in', live);
    const recorded = this.sql.selectFrom('uploads').select(sql<string>`'upload:' || id`.as('holder'));
    await this.sql
      .deleteFrom('quota_reservations')
      .where('holder', 'in', dead)
      .where('holder', 'not in', recorded)
      .execute();
  }

  /**
   * Forgets the holds of uploads that are neither recorded nor being created: ended without
   * their hold given back (their user deleted, the records going with the account).
   */
  async forgetEndedUploads(): Promise<void> {
    const recorded = this.sql.selectFrom('uploads').select(sql<string>`'upload:' || id`.as('holder'));
    const creating = this.sql
      .selectFrom('upload_creations')
      .select(sql<string>`'upload:' || id`.as('holder'));
    await this.sql
      .deleteFrom('quota_reservations')
      .where('holder', 'like', 'upload:%')
      .where('holder', 'not in', recorded)
      .where('holder', 'not in', creating)
      .execute();
  }

  /** Forgets what instances not in `live` held (gone, their writes with them); uploads' stay. */
  async forgetInstancesBut(live: readonly string[]): Promise<void> {
    let query = this.sql.deleteFrom('quota_reservations').where('holder', 'not like', 'upload:%');
    if (live.length > 0) query = query.where('holder', 'not in', live);
    await query.execute();
  }
}
