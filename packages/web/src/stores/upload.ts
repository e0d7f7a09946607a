import { create } from 'zustand';
import { createFolder } from '../api/resources';
import { uploadFile } from '../api/uploads';
import { startup } from '../startup';
import { etaSeconds, SPEED_SAMPLE_INTERVAL_MS, SpeedMeter } from '../utils/upload-speed';
import { useAuthStore } from './auth';
import { useFilesStore } from './files';
import { showError } from './toasts';

/** One file (or empty folder) waiting, going or gone in the current batch of uploads. */
export interface UploadTask {
  id: number;
  /** The virtual target path; a folder's ends with '/'. */
  path: string;
  /** What the panel shows: the path inside the folder the upload went to. */
  name: string;
  size: number;
  isDir: boolean;
  /** The content; absent for a folder. */
  file?: File;
  /** Replace a file that exists at the target. */
  override: boolean;
}

export type NewUploadTask = Omit<UploadTask, 'id'>;

/** A running transfer of one task. */
export interface Transfer {
  done: Promise<void>;
  abort: () => void;
}

/** Moves one task to the server, reporting the bytes sent so far. */
export type Transport = (task: UploadTask, onProgress: (bytesSent: number) => void) => Transfer;

/** Progress on screen changes at most this often, however fast the chunks report. */
export const PROGRESS_THROTTLE_MS = 100;
export const MIN_UPLOADS = 1;
export const MAX_UPLOADS = 10;

export interface UploadState {
  /** Every task of the batch under way (finished ones too, for the totals). */
  tasks: Record<number, UploadTask>;
  /** Waiting tasks, first to go first. */
  queue: number[];
  /** Tasks being sent. */
  active: number[];
  /** Bytes sent per task (as of the last progress update). */
  loaded: Record<number, number>;
  totalBytes: number;
  loadedBytes: number;
  /** Smoothed speed in MB/s. */
  speed: number;
  /** Seconds left, or null when unknown. */
  eta: number | null;
  /** Whether the progress panel shows only its summary. */
  collapsed: boolean;
  enqueue: (tasks: NewUploadTask[]) => void;
  /** Stops every upload, forgets the queue and reloads the listing. */
  abort: () => void;
  toggleCollapsed: () => void;
}

export interface UploadConfig {
  transport: Transport;
  /** How many tasks may go at once: the user's uploads limit. */
  limit: () => number;
  /** Runs when a batch ends, finished or aborted: the listing is stale. */
  onSettled: () => void;
  onError: (error: unknown) => void;
  now: () => number;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/** The user's uploads limit, 1 to 10 (1 when unknown). */
export function uploadsLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return MIN_UPLOADS;
  return Math.min(MAX_UPLOADS, Math.max(MIN_UPLOADS, Math.floor(limit)));
}

/** Folders are created with a plain POST; files go through tus where possible (api/uploads). */
const defaultTransport: Transport = (task, onProgress) => {
  if (task.isDir || !task.file) return { done: createFolder(task.path), abort: () => undefined };
  return uploadFile(task.path, task.file, {
    override: task.override,
    tusSettings: startup.TusSettings,
    onProgress,
  });
};

const defaultConfig: UploadConfig = {
  transport: defaultTransport,
  limit: () => uploadsLimit(useAuthStore.getState().user?.uploadsLimit),
  onSettled: () => useFilesStore.getState().invalidateListing(),
  onError: showError,
  now: () => Date.now(),
};
let config: UploadConfig = defaultConfig;

/** Replaces parts of how uploads run (tests); with no argument, restores the defaults. */
export function configureUploads(overrides?: Partial<UploadConfig>): void {
  config = overrides ? { ...defaultConfig, ...overrides } : defaultConfig;
}

const EMPTY = {
  tasks: {},
  queue: [],
  active: [],
  loaded: {},
  totalBytes: 0,
  loadedBytes: 0,
  speed: 0,
  eta: null,
} satisfies Partial<UploadState>;

/** Leaving the page would kill the uploads: the browser asks first. */
function warnBeforeLeaving(event: BeforeUnloadEvent): void {
  event.preventDefault();
  // Older browsers need a value here to ask.
  event.returnValue = '';
}

// The running side of the batch: what the state only shows.
let nextId = 1;
/** Bumped when a batch ends; reports of an earlier batch are ignored. */
let batch = 0;
const transfers = new Map<number, Transfer>();
const sent = new Map<number, number>();
const meter = new SpeedMeter();
let speedTimer: ReturnType<typeof setInterval> | undefined;
let flushTimer: ReturnType<typeof setTimeout> | undefined;
let lastFlush = 0;

export const useUploadStore = create<UploadState>()((set, get) => {
  const liveBytes = (): number => {
    let total = 0;
    for (const bytes of sent.values()) total += bytes;
    return total;
  };

  const flush = () => {
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    flushTimer = undefined;
    lastFlush = config.now();
    const loadedBytes = liveBytes();
    set((state) => ({
      loaded: Object.fromEntries(sent),
      loadedBytes,
      eta: state.speed > 0 ? etaSeconds(state.totalBytes - loadedBytes, state.speed) : null,
    }));
  };

  const scheduleFlush = () => {
    if (flushTimer !== undefined) return;
    const wait = PROGRESS_THROTTLE_MS - (config.now() - lastFlush);
    if (wait <= 0) flush();
    else flushTimer = setTimeout(flush, wait);
  };

  const sampleSpeed = () => {
    const loadedBytes = liveBytes();
    const speed = meter.sample(loadedBytes, config.now());
    set((state) => ({ speed, eta: etaSeconds(state.totalBytes - loadedBytes, speed) }));
  };

  const begin = () => {
    window.addEventListener('beforeunload', warnBeforeLeaving);
    meter.start(0, config.now());
    speedTimer = setInterval(sampleSpeed, SPEED_SAMPLE_INTERVAL_MS);
  };

  const end = () => {
    batch += 1;
    window.removeEventListener('beforeunload', warnBeforeLeaving);
    clearInterval(speedTimer);
    speedTimer = undefined;
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    flushTimer = undefined;
    transfers.clear();
    sent.clear();
    set(EMPTY);
    config.onSettled();
  };

  const start = (id: number) => {
    const task = get().tasks[id];
    if (!task) return;
    set((state) => ({ queue: state.queue.filter((q) => q !== id), active: [...state.active, id] }));
    const mine = batch;
    sent.set(id, 0);
    const transfer = config.transport(task, (bytes) => {
      if (mine !== batch) return;
      sent.set(id, Math.min(Math.max(bytes, 0), task.size));
      scheduleFlush();
    });
    transfers.set(id, transfer);
    transfer.done
      .catch((error: unknown) => {
        if (mine === batch && !isAbort(error)) config.onError(error);
      })
      .finally(() => {
        if (mine !== batch) return;
        transfers.delete(id);
        // A failed file counts as done, so the totals still reach 100 %.
        sent.set(id, task.size);
        set((state) => ({ active: state.active.filter((a) => a !== id) }));
        flush();
        pump();
      });
  };

  const pump = () => {
    const limit = Math.max(MIN_UPLOADS, config.limit());
    while (get().active.length < limit && get().queue.length > 0) start(get().queue[0]!);
    if (get().active.length === 0 && get().queue.length === 0 && Object.keys(get().tasks).length > 0) end();
  };

  return {
    ...EMPTY,
    collapsed: false,

    enqueue: (incoming) => {
      if (incoming.length === 0) return;
      if (Object.keys(get().tasks).length === 0) begin();
      const tasks = incoming.map((task) => ({ ...task, id: nextId++ }));
      set((state) => ({
        tasks: { ...state.tasks, ...Object.fromEntries(tasks.map((task) => [task.id, task])) },
        queue: [...state.queue, ...tasks.map((task) => task.id)],
        totalBytes: state.totalBytes + tasks.reduce((sum, task) => sum + task.size, 0),
      }));
      pump();
    },

    abort: () => {
      if (Object.keys(get().tasks).length === 0) return;
      const running = [...transfers.values()];
      end();
      for (const transfer of running) transfer.abort();
    },

    toggleCollapsed: () => set((state) => ({ collapsed: !state.collapsed })),
  };
});

/** Files left: those being sent and those waiting. */
export const selectRemainingCount = (state: UploadState): number => state.active.length + state.queue.length;

/** Whole percent of the batch's bytes sent (100 for a batch of empty files and folders). */
export const selectPercent = (state: UploadState): number => {
  if (state.totalBytes <= 0) return Object.keys(state.tasks).length > 0 ? 0 : 100;
  return Math.min(100, Math.floor((state.loadedBytes / state.totalBytes) * 100));
};

export const selectUploading = (state: UploadState): boolean => Object.keys(state.tasks).length > 0;
