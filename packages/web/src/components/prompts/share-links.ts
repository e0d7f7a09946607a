import { SHARE_UNITS, type Share, type ShareUnit } from '@filebrowser/contract';
import type { NewShare } from '../../api/shares';
import { formatRelative } from '../../utils/format-date';

/** The longest duration the server accepts, in any unit. */
export const MAX_SHARE_DURATION = 2147483647;
export const DEFAULT_SHARE_UNIT: ShareUnit = 'hours';
export { SHARE_UNITS };

/** Permanent links first, then the ones that expire soonest; the order the prompt keeps. */
export function sortShareLinks(links: readonly Share[]): Share[] {
  return [...links].sort((a, b) => {
    if (a.expire === 0 || b.expire === 0) return (a.expire === 0 ? 0 : 1) - (b.expire === 0 ? 0 : 1);
    return a.expire - b.expire;
  });
}

/** "in 3 hours", or the translated word for a link that never expires. */
export function expiryLabel(
  link: Pick<Share, 'expire'>,
  permanent: string,
  locale: string,
  now = new Date(),
) {
  return link.expire === 0 ? permanent : formatRelative(new Date(link.expire * 1000), locale, now);
}

export type DurationCheck = { ok: true; expires: string } | { ok: false };

/**
 * The duration field as the server wants it: a whole number from 0 to 2147483647; empty or 0
 * means the link never expires, sent as an empty value.
 */
export function checkDuration(text: string): DurationCheck {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, expires: '' };
  if (!/^\d+$/.test(trimmed)) return { ok: false };
  const n = Number(trimmed);
  if (n > MAX_SHARE_DURATION) return { ok: false };
  return { ok: true, expires: n === 0 ? '' : String(n) };
}

/** The body of a new link, or undefined when the duration cannot be sent. */
export function newShareRequest(duration: string, unit: ShareUnit, password: string): NewShare | undefined {
  const checked = checkDuration(duration);
  if (!checked.ok) return undefined;
  return { expires: checked.expires, unit, password: password.trim() };
}
