/** What an unreadable chunk size falls back to. */
export const FALLBACK_CHUNK_SIZE = 1024 * 1024;

const UNIT_EXPONENTS: Record<string, number> = { B: 0, K: 1, KB: 1, M: 2, MB: 2, G: 3, GB: 3, T: 4, TB: 4 };
const DISPLAY_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/**
 * Reads a chunk size typed by an admin: a number (decimals allowed) with an optional binary unit,
 * e.g. "10MB", "1.5 G", "512". Anything else becomes 1 MiB.
 */
export function parseChunkSize(input: string): number {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)\s*$/i.exec(input);
  if (!match?.[1]) return FALLBACK_CHUNK_SIZE;
  const exponent = UNIT_EXPONENTS[(match[2] || 'B').toUpperCase()];
  if (exponent === undefined) return FALLBACK_CHUNK_SIZE;
  return Math.round(Number(match[1]) * 1024 ** exponent);
}

/** Shows a byte count in the largest unit that keeps it at least 1, in a form parseChunkSize reads back. */
export function formatChunkSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1) return '0B';
  let exponent = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), DISPLAY_UNITS.length - 1);
  let value = Number((bytes / 1024 ** exponent).toFixed(2));
  // Rounding (or a floating-point log just below an exact power) can reach the next unit.
  if (value >= 1024 && exponent < DISPLAY_UNITS.length - 1) {
    exponent += 1;
    value = Number((bytes / 1024 ** exponent).toFixed(2));
  }
  return `${value}${DISPLAY_UNITS[exponent]}`;
}
