import type { Job } from '@filebrowser/contract';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { useFilesStore } from '../../stores/files';
import { MAX_UNSEEN_POLLS, jobPercent, useJobsStore } from '../../stores/jobs';
import { useToastStore } from '../../stores/toasts';
import { tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { JobsPanel } from './JobsPanel';

const MiB = 1024 * 1024;

const job = (over: Partial<Job> = {}): Job => ({
  id: 'job-1',
  action: 'copy',
  state: 'running',
  items: ['/docs/big'],
  destination: '/backup',
  bytesDone: MiB,
  bytesTotal: 4 * MiB,
  itemsDone: 3,
  itemsTotal: 10,
  startedAt: 0,
  ...over,
});

describe('jobs', () => {
  const fetchMock = vi.fn<typeof fetch>();
  /** What the server says of each job id (a status code: that error). */
  let server: Record<string, Job | number> = {};
  const calls: string[] = [];
  /** What `GET /api/jobs` answers. */
  let running: Job[] = [];

  beforeEach(() => {
    server = {};
    running = [];
    calls.length = 0;
    fetchMock.mockImplementation(async (input, init) => {
      const url = String(input);
      const method = init?.method ?? 'GET';
      calls.push(`${method} ${url}`);
      if (url.endsWith('/api/jobs')) return new Response(JSON.stringify(running), { status: 200 });
      const id = decodeURIComponent(url.split('/api/jobs/')[1] ?? '');
      const known = server[id];
      if (known === undefined || typeof known === 'number') {
        const status = known ?? 404;
        return new Response(`${status} Error\n`, { status });
      }
      const answer = method === 'DELETE' ? { ...known, state: 'cancelled' } : known;
      return new Response(JSON.stringify(answer), { status: 200 });
    });
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: tokenUser({ create: true }), jwt: 'a.b.c' });
    useJobsStore.setState({ jobs: [] });
    useToastStore.setState({ toasts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('draws nothing while no job is followed', async () => {
    const { container } = await renderWithApp(<JobsPanel />);
    expect(container.innerHTML).toBe('');
  });

  it('after a reload, follows the running jobs the server knows of', async () => {
    running = [job({ id: 'job-9', action: 'rename', items: ['/a', '/b'] })];
    await renderWithApp(<JobsPanel />);
    const panel = await screen.findByRole('region', { name: 'Work in progress' });
    expect(panel.textContent).toContain('Moving 2 items');
    expect(panel.textContent).toContain('25% · 1 MiB / 4 MiB');
  });

  it('tells progress by bytes when files were counted, by entries otherwise', () => {
    expect(jobPercent(job())).toBe(25);
    expect(jobPercent(job({ bytesTotal: 0, bytesDone: 0 }))).toBe(30);
    expect(jobPercent(job({ bytesTotal: 0, itemsTotal: 0 }))).toBeUndefined();
    expect(jobPercent(undefined)).toBeUndefined();
  });

  it('shows a starting job, then its progress once the server told it', async () => {
    useJobsStore.getState().follow('job-1', 'copy', 'big');
    await renderWithApp(<JobsPanel />);
    const panel = screen.getByRole('region', { name: 'Work in progress' });
    expect(panel.textContent).toContain('Copying big');
    expect(panel.textContent).toContain('Starting…');
    // Indeterminate until the totals are known.
    expect(
      screen.getByRole<HTMLProgressElement>('progressbar', { name: 'Copying big' }).hasAttribute('value'),
    ).toBe(false);

    server['job-1'] = job();
    await useJobsStore.getState().refresh();
    await waitFor(() => expect(panel.textContent).toContain('25% · 1 MiB / 4 MiB'));
    expect(screen.getByRole<HTMLProgressElement>('progressbar', { name: 'Copying big' }).value).toBe(25);
  });

  it('a job that ended leaves the panel and reloads the listing; a failure is shown', async () => {
    useJobsStore.getState().follow('job-1', 'copy', 'big');
    useJobsStore.getState().follow('job-2', 'rename', 'notes.txt');
    const version = useFilesStore.getState().listingVersion;
    server['job-1'] = job({ state: 'done' });
    server['job-2'] = job({ id: 'job-2', action: 'rename', state: 'failed', error: 'conflict', status: 409 });
    await useJobsStore.getState().refresh();
    expect(useJobsStore.getState().jobs).toEqual([]);
    expect(useFilesStore.getState().listingVersion).toBeGreaterThan(version);
    expect(useToastStore.getState().toasts.map((t) => t.message)).toEqual(['conflict']);
  });

  it('a download the server has not seen yet waits, then is dropped', async () => {
    useJobsStore.getState().follow('dl-1', 'archive', 'photos');
    await useJobsStore.getState().refresh();
    expect(useJobsStore.getState().jobs[0]?.unseen).toBe(1);
    for (let i = 1; i < MAX_UNSEEN_POLLS; i++) await useJobsStore.getState().refresh();
    expect(useJobsStore.getState().jobs).toEqual([]);
    // A finished download does not touch the listing or the toasts.
    expect(useToastStore.getState().toasts).toEqual([]);
  });

  it('cancel asks the server to stop the job and takes it off the panel', async () => {
    server['job-1'] = job();
    useJobsStore.getState().follow('job-1', 'copy', 'big');
    await useJobsStore.getState().refresh();
    await renderWithApp(<JobsPanel />);
    fireEvent.click(screen.getByRole('button', { name: 'Cancel big' }));
    await waitFor(() => expect(useJobsStore.getState().jobs).toEqual([]));
    expect(calls).toContain('DELETE /api/jobs/job-1');
    expect(screen.queryByRole('region', { name: 'Work in progress' })).toBeNull();
  });
});
