/** How often the upload speed is measured. */
export const SPEED_SAMPLE_INTERVAL_MS = 1000;
/** How many recent measurements are averaged. */
export const SPEED_SAMPLES = 5;
/** How much a new average moves the shown speed; the rest is the previous estimate. */
export const SPEED_NEW_WEIGHT = 0.2;

const BYTES_PER_MB = 1024 * 1024;

/**
 * The upload speed in MB/s (1 MB = 1024² bytes, like every size on screen), smoothed so that the
 * number and the ETA derived from it do not jump with every chunk: the average of the last five
 * one-second measurements, blended 0.2 new / 0.8 old into the previous estimate. The first
 * measurement is taken as it is, so the speed does not crawl up from zero.
 */
export class SpeedMeter {
  private samples: number[] = [];
  private last: { bytes: number; at: number } | null = null;
  private estimate: number | null = null;

  /** Where the measurement starts (bytes done at time `at`, in ms). */
  start(bytes: number, at: number): void {
    this.samples = [];
    this.estimate = null;
    this.last = { bytes, at };
  }

  /** Records the bytes done at time `at` (ms) and returns the smoothed speed in MB/s. */
  sample(bytes: number, at: number): number {
    if (!this.last) {
      this.start(bytes, at);
      return 0;
    }
    const seconds = (at - this.last.at) / 1000;
    if (seconds <= 0) return this.speed;
    const current = Math.max(0, bytes - this.last.bytes) / BYTES_PER_MB / seconds;
    this.last = { bytes, at };
    this.samples.push(current);
    if (this.samples.length > SPEED_SAMPLES) this.samples.shift();
    const average = this.samples.reduce((sum, value) => sum + value, 0) / this.samples.length;
    this.estimate =
      this.estimate === null ? average : SPEED_NEW_WEIGHT * average + (1 - SPEED_NEW_WEIGHT) * this.estimate;
    return this.estimate;
  }

  get speed(): number {
    return this.estimate ?? 0;
  }
}

/** Seconds left at `speed` MB/s, or null when that cannot be known (no speed measured yet). */
export function etaSeconds(remainingBytes: number, speed: number): number | null {
  if (!(speed > 0) || !Number.isFinite(speed) || !Number.isFinite(remainingBytes)) return null;
  return Math.max(0, remainingBytes) / (speed * BYTES_PER_MB);
}

const UNKNOWN_ETA = '--:--:--';
const pad = (value: number): string => String(value).padStart(2, '0');

/** A time left as hh:mm:ss (hours grow past 99 when they must), or --:--:-- when unknown. */
export function formatEta(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return UNKNOWN_ETA;
  const total = Math.ceil(seconds);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  return `${pad(hours)}:${pad(minutes)}:${pad(total % 60)}`;
}

/** A speed in MB/s with two decimals, in the reader's number format. */
export function formatSpeed(speed: number, locale = 'en'): string {
  return new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(
    Number.isFinite(speed) && speed > 0 ? speed : 0,
  );
}
