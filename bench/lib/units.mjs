// Byte and rate formatting shared by the rows.

const MiB = 1024 * 1024;

/**
 * @param {number} bytes
 * @param {number} seconds
 */
export function mibPerSecond(bytes, seconds) {
  return seconds > 0 ? bytes / MiB / seconds : 0;
}

/** @param {number} bytes */
export function fmtSize(bytes) {
  if (bytes >= 1024 * MiB) return `${+(bytes / (1024 * MiB)).toFixed(2)} GiB`;
  if (bytes >= MiB) return `${+(bytes / MiB).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}
