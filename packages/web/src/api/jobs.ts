import { ARCHIVE_PROGRESS_QUERY, type Job, type JobStart, type JobStarted } from '@filebrowser/contract';
import { requestJson } from './client';

/** Starts a copy or move on the server; it runs on after the answer (`GET /api/jobs/:id` follows it). */
export function startJob(body: JobStart): Promise<JobStarted> {
  return requestJson<JobStarted>('/api/jobs', { method: 'POST', json: body });
}

/** The signed-in user's running jobs. */
export function listJobs(): Promise<Job[]> {
  return requestJson<Job[]>('/api/jobs');
}

export function fetchJob(id: string, signal?: AbortSignal): Promise<Job> {
  return requestJson<Job>(`/api/jobs/${encodeURIComponent(id)}`, { signal });
}

/** Stops a job; answers once the server has stopped it and removed what it had made. */
export function cancelJob(id: string): Promise<Job> {
  return requestJson<Job>(`/api/jobs/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** A fresh id for a download the page follows (`progress=`): 16 random bytes, URL-safe. */
export function newJobId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** An archive address followed as the job `id`. */
export function withProgress(url: string, id: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${ARCHIVE_PROGRESS_QUERY}=${id}`;
}
