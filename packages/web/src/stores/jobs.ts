import type { Job, JobAction } from '@filebrowser/contract';
import { create } from 'zustand';
import { errorStatus } from '../api/client';
import { cancelJob, fetchJob, listJobs } from '../api/jobs';
import { i18n } from '../i18n';
import { useFilesStore } from './files';
import { showError } from './toasts';

/** Polls a download may go unseen by the server (its request not yet arrived) before it is dropped. */
export const MAX_UNSEEN_POLLS = 30;

/** Milliseconds between two looks at the jobs the page follows, at most. */
export const JOB_POLL_MS = 1000;

/** Milliseconds before the first look at a job just started (the wait then doubles). */
export const FIRST_POLL_MS = 125;

/** A job the page follows: what it shows before the server has told anything, then the server's view. */
export interface FollowedJob {
  id: string;
  action: JobAction;
  /** What the user recognises it by (a name, or "3 items"). */
  label: string;
  job?: Job;
  /** Polls that did not find it (a download whose request has not reached the server yet). */
  unseen: number;
  /** A cancel was asked for and is under way. */
  cancelling: boolean;
}

interface JobsState {
  jobs: FollowedJob[];
  follow(id: string, action: JobAction, label: string): void;
  /** Follows the user's running jobs the page does not know of (after a reload). */
  adopt(): Promise<void>;
  /** Asks the server about every followed job once; ended jobs leave the list. */
  refresh(): Promise<void>;
  cancel(id: string): Promise<void>;
}

/** How far a job got, 0–100: bytes when files are counted, entries otherwise. */
export function jobPercent(job: Job | undefined): number | undefined {
  if (!job) return undefined;
  if (job.bytesTotal > 0) return Math.min(100, Math.floor((job.bytesDone / job.bytesTotal) * 100));
  if (job.itemsTotal > 0) return Math.min(100, Math.floor((job.itemsDone / job.itemsTotal) * 100));
  return undefined;
}

/** A job's name for the panel when the page did not start it: its item's name, or how many. */
function labelOf(job: Job): string {
  const [first] = job.items;
  if (job.items.length === 1 && first) return first.split('/').filter(Boolean).pop() ?? '/';
  return i18n.t('jobs.severalItems', { count: job.items.length });
}

/** What happens when a job ends: copies and moves change the listing; failures are shown. */
function ended(job: Job): void {
  if (job.action !== 'archive') useFilesStore.getState().invalidateListing();
  if (job.state === 'failed') showError(job.error ?? 'failed');
}

export const useJobsStore = create<JobsState>()((set, get) => {
  const update = (id: string, change: (f: FollowedJob) => FollowedJob | undefined) =>
    set((state) => ({
      jobs: state.jobs.flatMap((f) => {
        if (f.id !== id) return [f];
        const next = change(f);
        return next ? [next] : [];
      }),
    }));

  return {
    jobs: [],
    follow: (id, action, label) =>
      set((state) => ({ jobs: [...state.jobs, { id, action, label, unseen: 0, cancelling: false }] })),
    adopt: async () => {
      let running: Job[];
      try {
        running = await listJobs();
      } catch {
        return; // An older server, or signed out: nothing to follow.
      }
      const known = new Set(get().jobs.map((f) => f.id));
      const fresh = running.filter((job) => !known.has(job.id));
      if (fresh.length === 0) return;
      set((state) => ({
        jobs: [
          ...state.jobs,
          ...fresh.map((job) => ({
            id: job.id,
            action: job.action,
            label: labelOf(job),
            job,
            unseen: 0,
            cancelling: false,
          })),
        ],
      }));
    },
    refresh: async () => {
      await Promise.all(
        get().jobs.map(async ({ id }) => {
          try {
            const job = await fetchJob(id);
            if (job.state !== 'running') ended(job);
            update(id, (f) => (job.state === 'running' ? { ...f, job, unseen: 0 } : undefined));
          } catch (error) {
            if (errorStatus(error) !== 404) return;
            // A download not yet seen by the server, or a job the server no longer knows (restarted).
            update(id, (f) =>
              f.job || f.unseen + 1 >= MAX_UNSEEN_POLLS ? undefined : { ...f, unseen: f.unseen + 1 },
            );
          }
        }),
      );
    },
    cancel: async (id) => {
      update(id, (f) => ({ ...f, cancelling: true }));
      try {
        const job = await cancelJob(id);
        if (job.state !== 'cancelled') ended(job);
        else if (job.action !== 'archive') useFilesStore.getState().invalidateListing();
        update(id, () => undefined);
      } catch (error) {
        if (errorStatus(error) === 404) update(id, () => undefined);
        else {
          update(id, (f) => ({ ...f, cancelling: false }));
          showError(error);
        }
      }
    },
  };
});
