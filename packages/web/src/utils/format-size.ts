const SIZE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'] as const;

/** A byte count in binary units (base 1024) with at most two decimals, e.g. "1.5 MiB". */
export function formatSize(bytes: number, locale = 'en'): string {
  if (!Number.isFinite(bytes) || bytes <= 0) return `0 ${SIZE_UNITS[0]}`;
  let exponent = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), SIZE_UNITS.length - 1);
  let value = bytes / 1024 ** exponent;
  // 1048575 bytes would round to "1,024 KiB": say "1 MiB" instead.
  if (Math.round(value * 100) / 100 >= 1024 && exponent < SIZE_UNITS.length - 1) {
    exponent += 1;
    value /= 1024;
  }
  const number = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(value);
  return `${number} ${SIZE_UNITS[exponent]}`;
}
