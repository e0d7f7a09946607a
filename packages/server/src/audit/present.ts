import type { AuditEntry } from '@filebrowser/contract';
import type { StoredAuditRecord } from '../store/audit.js';

export function presentRecord(r: StoredAuditRecord): AuditEntry {
  return {
    id: r.id,
    time: r.time,
    user: r.username,
    userID: r.userId,
    address: r.address,
    action: r.action,
    path: r.path,
    destination: r.destination,
    result: r.status < 400 ? 'ok' : 'error',
    status: r.status,
    detail: r.detail,
  };
}

export const CSV_COLUMNS = [
  'id',
  'time',
  'user',
  'userID',
  'address',
  'action',
  'path',
  'destination',
  'result',
  'status',
  'detail',
] as const satisfies readonly (keyof AuditEntry)[];

/**
 * One CSV cell. A cell a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, or a tab or
 * carriage return before one) gets a leading `'`: paths and usernames are chosen by users.
 */
export function csvCell(value: string | number): string {
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A record as one CSV line (CRLF, as RFC 4180 has it); the time in ISO 8601 for people. */
export function csvLine(entry: AuditEntry): string {
  return (
    CSV_COLUMNS.map((c) => csvCell(c === 'time' ? new Date(entry.time).toISOString() : entry[c])).join(',') +
    '\r\n'
  );
}
