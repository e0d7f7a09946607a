/** A token's use is recorded at most once per this interval: a sync client makes thousands of requests. */
export const TOKEN_USE_INTERVAL_MS = 15 * 60_000;

/** Tokens remembered at most; past it the oldest are forgotten (and recorded again on their next use). */
const MAX_REMEMBERED = 10_000;

/** Says when a token's use is due for a record again. */
export class TokenUseThrottle {
  private readonly last = new Map<string, number>();

  constructor(private readonly intervalMs = TOKEN_USE_INTERVAL_MS) {}

  due(tokenId: string, now = Date.now()): boolean {
    const last = this.last.get(tokenId);
    if (last !== undefined && now - last < this.intervalMs) return false;
    // Re-inserted so that the map's order is the order of last records, oldest first.
    this.last.delete(tokenId);
    this.last.set(tokenId, now);
    if (this.last.size > MAX_REMEMBERED) this.last.delete(this.last.keys().next().value!);
    return true;
  }
}
