import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { addressKey } from './ip.js';
import { AttemptLimiter, GuessThrottle } from './rate-limit.js';

const WINDOW = 60_000;
const T0 = 1_000_000;

/** The Retry-After of a refused guess, or 0 when the guess was counted. */
async function refusedFor(
  throttle: GuessThrottle,
  address: string,
  subject: string,
  now = T0,
): Promise<number> {
  try {
    await throttle.reserve(address, subject, now);
    return 0;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(429);
    return Number((err as AppError).headers['Retry-After']);
  }
}

describe('GuessThrottle', () => {
  it('counts every reserved guess, so the limit holds however many arrive at once', async () => {
    const throttle = new GuessThrottle(5, WINDOW, 'slow down');
    // All at once: each is counted before any is checked.
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => refusedFor(throttle, '10.0.0.1', 'admin')),
    );
    expect(answers.filter((a) => a === 0)).toHaveLength(5);
    expect(answers.slice(5).every((a) => a === 60)).toBe(true);
  });

  it('lets the window pass', async () => {
    const throttle = new GuessThrottle(2, WINDOW, 'slow down');
    await refusedFor(throttle, '10.0.0.1', 'admin');
    await refusedFor(throttle, '10.0.0.1', 'admin');
    expect(await refusedFor(throttle, '10.0.0.1', 'admin', T0 + WINDOW - 1000)).toBe(1);
    expect(await refusedFor(throttle, '10.0.0.1', 'admin', T0 + WINDOW)).toBe(0);
  });

  it('limits one address over all subjects', async () => {
    const throttle = new GuessThrottle(3, WINDOW, 'slow down');
    for (const user of ['a', 'b', 'c']) expect(await refusedFor(throttle, '10.0.0.1', user)).toBe(0);
    expect(await refusedFor(throttle, '10.0.0.1', 'd')).toBeGreaterThan(0);
    expect(await refusedFor(throttle, '10.0.0.2', 'd')).toBe(0);
  });

  it('forgets the failures of an address for a subject after a right guess', async () => {
    const throttle = new GuessThrottle(4, WINDOW, 'slow down');
    for (let i = 0; i < 3; i++) await refusedFor(throttle, '10.0.0.1', 'admin');
    await (await throttle.reserve('10.0.0.1', 'admin', T0)).succeeded(T0);
    for (let i = 0; i < 4; i++) expect(await refusedFor(throttle, '10.0.0.1', 'admin')).toBe(0);
    expect(await refusedFor(throttle, '10.0.0.1', 'admin')).toBeGreaterThan(0);
  });

  it('never refuses an address that has not failed, and tightens the others under attack', async () => {
    const throttle = new GuessThrottle(8, WINDOW, 'slow down');
    for (let i = 0; i < 8; i++) expect(await refusedFor(throttle, '10.0.0.1', 'admin')).toBe(0);
    expect(await refusedFor(throttle, '10.0.0.1', 'admin')).toBeGreaterThan(0);
    // Under attack: a quarter of the limit (two) for every further address.
    for (const address of ['10.0.1.1', '10.0.2.2', '10.0.3.3']) {
      expect(await refusedFor(throttle, address, 'admin')).toBe(0);
      expect(await refusedFor(throttle, address, 'admin')).toBe(0);
      expect(await refusedFor(throttle, address, 'admin')).toBeGreaterThan(0);
    }
    // Other subjects are not under attack.
    for (let i = 0; i < 8; i++) expect(await refusedFor(throttle, '10.0.9.9', 'bob')).toBe(0);
    // The attack is remembered longer than the window, and forgotten after.
    expect(await refusedFor(throttle, '10.0.4.4', 'admin', T0 + WINDOW)).toBe(0);
    expect(await refusedFor(throttle, '10.0.4.4', 'admin', T0 + WINDOW)).toBe(0);
    expect(await refusedFor(throttle, '10.0.4.4', 'admin', T0 + WINDOW)).toBeGreaterThan(0);
    for (let i = 0; i < 8; i++)
      expect(await refusedFor(throttle, '10.0.5.5', 'admin', T0 + 4 * WINDOW)).toBe(0);
  });

  it('counts an IPv6 /64 as one address', async () => {
    const throttle = new GuessThrottle(2, WINDOW, 'slow down');
    expect(await refusedFor(throttle, '2001:db8:1:2::1', 'admin')).toBe(0);
    expect(await refusedFor(throttle, '2001:db8:1:2:ffff::9', 'admin')).toBe(0);
    expect(await refusedFor(throttle, '2001:db8:1:2:abcd:1:2:3', 'x')).toBeGreaterThan(0);
    expect(await refusedFor(throttle, '2001:db8:1:3::1', 'x')).toBe(0);
  });
});

describe('addressKey', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['::1', '0:0:0:0::/64'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:DB8:0001:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['2001:db8:0:5:1::192.0.2.7', '2001:db8:0:5::/64'],
    ['not an address', 'not an address'],
  ])('%s counts as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});

/** Counts the sweeps, to see how often the whole map is walked. */
class CountingLimiter extends AttemptLimiter {
  sweeps = 0;
  protected override sweep(now: number): void {
    this.sweeps++;
    super.sweep(now);
  }
}

describe('AttemptLimiter', () => {
  it('walks its windows rarely however many are live, and forgets the ended ones', async () => {
    const limiter = new CountingLimiter(60_000);
    const start = 1_000_000;
    for (let i = 0; i < 25_000; i++) await limiter.take(`a${i}`, start);
    // Live windows cannot be swept away: the walks grow rarer as their number grows.
    expect(limiter.sweeps).toBeLessThanOrEqual(2);
    expect(await limiter.count('a0', start)).toBe(1);

    const later = start + 60_000;
    for (let i = 0; i < 25_000; i++) await limiter.take(`b${i}`, later);
    expect(await limiter.count('a0', later)).toBe(0);
    expect(await limiter.count('b0', later)).toBe(1);
    expect(limiter.sweeps).toBeLessThanOrEqual(4);
  });

  it('counts, gives back and clears the attempts of a key within its window', async () => {
    const limiter = new AttemptLimiter(1_000);
    for (let i = 0; i < 3; i++) await limiter.take('k', 0);
    expect(await limiter.take('k', 0)).toEqual({ count: 4, resetAt: 1_000 });
    await limiter.give('k', 3, 0);
    expect(await limiter.count('k', 0)).toBe(1);
    expect(await limiter.clear('k', 0)).toBe(1);
    expect(await limiter.count('k', 0)).toBe(0);
    await limiter.take('k', 0);
    expect(await limiter.count('k', 1_000)).toBe(0);
  });
});
