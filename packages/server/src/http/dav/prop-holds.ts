import type { AppContext } from '../../context.js';
import { reservationsFor, type Reservations } from '../../files/change/quota-reservations.js';
import { inTurn, type Turns } from '../../store/in-turn.js';
import { oncePerStore } from '../../store/once-per-store.js';

/** Bytes of all the dead properties one user set, wherever they are. */
export const MAX_PROP_BYTES_PER_USER = 1024 * 1024;

/** A hold's give-back: never rejects; until it is done others see the bytes still held. */
export type PropRelease = () => Promise<void>;

/**
 * Bytes of properties each user's requests in progress are about to store (checked, not yet
 * written: a PROPPATCH until its rows are, a COPY until its copy is), counted with what is stored,
 * so that parallel requests cannot each pass the user's limit on their own. They are held as
 * the quota's reservations are (files/change/quota-reservations.ts), under a key of the user's
 * own: in this process on a SQLite file, in the database when several instances share it
 * (forgotten with an instance taken for dead). A check and the hold it grants run in the user's
 * turn, one at a time across the instances.
 */
class PropHolds {
  private readonly turns: Turns;
  private readonly reserved: Reservations;
  private readonly holder: string;

  constructor(ctx: AppContext) {
    this.turns = inTurn(ctx.store.lockLine);
    this.reserved = reservationsFor(ctx);
    this.holder = ctx.store.instance.id;
  }

  /**
   * Holds `bytes` more of a user's properties beside those `stored` (read in the turn): the
   * release, or undefined when that would pass the user's limit. Nothing to hold, nothing checked.
   */
  hold(userId: number, stored: () => Promise<number>, bytes: number): Promise<PropRelease | undefined> {
    if (bytes <= 0) return Promise.resolve(() => Promise.resolve());
    const key = `dav-props:${userId}`;
    return this.turns(key, async () => {
      if ((await stored()) + (await this.reserved.total(key)) + bytes > MAX_PROP_BYTES_PER_USER) {
        return undefined;
      }
      await this.reserved.add(this.holder, [key], bytes);
      let held = true;
      return () => {
        if (!held) return Promise.resolve();
        held = false;
        return this.reserved.letGo(this.holder, [key], bytes);
      };
    });
  }
}

const holds = oncePerStore<PropHolds>();

/** The property holds of a server (one per store: every request must see them). */
export function propHoldsOf(ctx: AppContext): PropHolds {
  return holds(ctx.store, () => new PropHolds(ctx));
}
