import { describe, expect, it } from 'vitest';
import { etaSeconds, formatEta, formatSpeed, SpeedMeter } from './upload-speed';

const MB = 1024 * 1024;

describe('SpeedMeter', () => {
  it('takes the first measurement as it is', () => {
    const meter = new SpeedMeter();
    meter.start(0, 0);
    expect(meter.sample(4 * MB, 1000)).toBeCloseTo(4);
  });

  it('blends the average of recent measurements 0.2 new / 0.8 old', () => {
    const meter = new SpeedMeter();
    meter.start(0, 0);
    meter.sample(10 * MB, 1000); // 10 MB/s; estimate 10
    // Second second at 0 MB/s: average of [10, 0] = 5, blended 0.2 * 5 + 0.8 * 10 = 9.
    expect(meter.sample(10 * MB, 2000)).toBeCloseTo(9);
    // Third at 30 MB/s: average of [10, 0, 30] = 13.33, blended 0.2 * 13.33 + 0.8 * 9 = 9.87.
    expect(meter.sample(40 * MB, 3000)).toBeCloseTo(0.2 * (40 / 3) + 0.8 * 9);
  });

  it('averages only the last five measurements', () => {
    const meter = new SpeedMeter();
    meter.start(0, 0);
    let bytes = 0;
    let at = 0;
    // A burst of 100 MB/s, then steady 1 MB/s: once the burst leaves the window of five, the
    // averages are 1 and the estimate converges to 1.
    bytes += 100 * MB;
    meter.sample(bytes, (at += 1000));
    let speed = 0;
    for (let i = 0; i < 60; i++) speed = meter.sample((bytes += MB), (at += 1000));
    expect(speed).toBeCloseTo(1, 3);
  });

  it('measures by elapsed time, not by the number of calls', () => {
    const meter = new SpeedMeter();
    meter.start(0, 0);
    expect(meter.sample(3 * MB, 2000)).toBeCloseTo(1.5);
    // No time elapsed: nothing changes.
    expect(meter.sample(9 * MB, 2000)).toBeCloseTo(1.5);
  });

  it('never goes negative when the byte count drops (a retried chunk)', () => {
    const meter = new SpeedMeter();
    meter.start(5 * MB, 0);
    expect(meter.sample(2 * MB, 1000)).toBe(0);
  });
});

describe('ETA', () => {
  it('is the remaining bytes over the speed', () => {
    expect(etaSeconds(10 * MB, 2)).toBe(5);
    expect(etaSeconds(0, 2)).toBe(0);
  });

  it('is unknown without a speed', () => {
    expect(etaSeconds(10 * MB, 0)).toBeNull();
    expect(etaSeconds(10 * MB, Number.NaN)).toBeNull();
  });

  it('formats as hh:mm:ss, rounding seconds up', () => {
    expect(formatEta(0)).toBe('00:00:00');
    expect(formatEta(0.2)).toBe('00:00:01');
    expect(formatEta(59)).toBe('00:00:59');
    expect(formatEta(61)).toBe('00:01:01');
    expect(formatEta(3600 + 23 * 60 + 45)).toBe('01:23:45');
    expect(formatEta(100 * 3600)).toBe('100:00:00');
  });

  it('shows --:--:-- when unknown', () => {
    expect(formatEta(null)).toBe('--:--:--');
    expect(formatEta(Number.POSITIVE_INFINITY)).toBe('--:--:--');
    expect(formatEta(-1)).toBe('--:--:--');
  });
});

describe('formatSpeed', () => {
  it('shows two decimals', () => {
    expect(formatSpeed(1.5)).toBe('1.50');
    expect(formatSpeed(12.345)).toBe('12.35');
    expect(formatSpeed(0)).toBe('0.00');
    expect(formatSpeed(Number.NaN)).toBe('0.00');
  });
});
