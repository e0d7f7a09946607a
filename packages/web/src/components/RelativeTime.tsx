import { formatAbsolute, formatRelative } from '../utils/format-date';

/** A date as "3 hours ago", the full date and time on hover, the machine-readable one for tools. */
export function RelativeTime({ date, locale }: { date: Date; locale: string }) {
  return (
    <time dateTime={date.toISOString()} title={formatAbsolute(date, locale)}>
      {formatRelative(date, locale)}
    </time>
  );
}
