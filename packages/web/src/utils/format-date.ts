const RELATIVE_STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Number.POSITIVE_INFINITY],
];

/** "3 hours ago", "in 2 days": the distance between a date and now in the largest fitting unit. */
export function formatRelative(date: Date, locale = 'en', now: Date = new Date()): string {
  let value = (date.getTime() - now.getTime()) / 1000;
  const formatter = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  for (const [unit, size] of RELATIVE_STEPS) {
    // Compared after rounding, so that 59.6 minutes reads "in 1 hour", not "in 60 minutes".
    if (Math.abs(Math.round(value)) < size) return formatter.format(Math.round(value), unit);
    value /= size;
  }
  return formatter.format(Math.round(value), 'year');
}

/** A full date and time in the user's language. */
export function formatAbsolute(date: Date, locale = 'en'): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}

/**
 * How listings show a modification time: exact when the user turned on the date format setting,
 * relative otherwise. Unparseable input comes back unchanged.
 */
export function formatModified(iso: string, exact: boolean, locale = 'en', now: Date = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return exact ? formatAbsolute(date, locale) : formatRelative(date, locale, now);
}
