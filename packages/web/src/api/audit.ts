import type { AuditPage } from '@filebrowser/contract';
import { apiURL, requestJson } from './client';

/** What the audit screen filters by; empty strings are no filter. Times are Unix milliseconds. */
export interface AuditFilters {
  user: string;
  action: string;
  path: string;
  from?: number;
  to?: number;
}

function queryOf(filters: AuditFilters, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams();
  if (filters.user) query.set('user', filters.user);
  if (filters.action) query.set('action', filters.action);
  if (filters.path) query.set('path', filters.path);
  if (filters.from !== undefined) query.set('from', String(filters.from));
  if (filters.to !== undefined) query.set('to', String(filters.to));
  for (const [key, value] of Object.entries(extra)) query.set(key, value);
  return query.toString();
}

/** One page of records, newest first; `cursor` is the `next` of the page before. */
export function listAudit(filters: AuditFilters, cursor = '', limit = 50): Promise<AuditPage> {
  const extra: Record<string, string> = { limit: String(limit), ...(cursor && { cursor }) };
  return requestJson<AuditPage>(`/api/audit?${queryOf(filters, extra)}`);
}

/** The download address of every matching record; the browser authenticates it with the auth cookie. */
export function auditExportURL(filters: AuditFilters, format: 'csv' | 'json'): string {
  return apiURL(`/api/audit/export?${queryOf(filters, { format })}`);
}
