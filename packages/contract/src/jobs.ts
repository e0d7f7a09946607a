import { Type, type Static } from '@sinclair/typebox';

/**
 * Long work the web app follows: a copy or move run as a job, and a folder
 * archive download that reports how far it got. Jobs live in the memory of one server instance.
 */

/** What a job does: `copy` and `rename` (a move) as `PATCH /api/resources` does them; `archive` is a download. */
export const JOB_ACTIONS = ['copy', 'rename', 'archive'] as const;
export type JobAction = (typeof JOB_ACTIONS)[number];

export const JOB_STATES = ['running', 'done', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Running jobs one user may have at once (starting one more answers 429). */
export const MAX_RUNNING_JOBS_PER_USER = 4;

/** `POST /api/jobs`: copy or move `items` into the folder `destination`, each keeping its name. */
export const JobStart = Type.Object({
  action: Type.Union([Type.Literal('copy'), Type.Literal('rename')]),
  /** Paths of the entries to copy or move, in the user's scope. */
  items: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 1000 }),
  /** The folder they go into. */
  destination: Type.String({ minLength: 1 }),
  /** Replace what is at a destination (needs the modify permission too), as `override=true`. */
  override: Type.Optional(Type.Boolean()),
  /** Take the first free `name(N)` when a destination exists, as `rename=true`. */
  rename: Type.Optional(Type.Boolean()),
});
export type JobStart = Static<typeof JobStart>;

export const JobStarted = Type.Object({ id: Type.String() });
export type JobStarted = Static<typeof JobStarted>;

/** Job ids: the server's for copies and moves, the client's (given as `progress=`) for downloads. */
export const JOB_ID_PATTERN = '^[A-Za-z0-9_-]{8,64}$';
export const JobParams = Type.Object({ id: Type.String({ pattern: JOB_ID_PATTERN }) });

export const Job = Type.Object({
  id: Type.String(),
  action: Type.Union(JOB_ACTIONS.map((a) => Type.Literal(a))),
  state: Type.Union(JOB_STATES.map((s) => Type.Literal(s))),
  /** The paths being copied, moved or archived. */
  items: Type.Array(Type.String()),
  /** Where copies and moves go (empty for a download). */
  destination: Type.String(),
  /** Bytes of files copied (or read into the archive) so far. */
  bytesDone: Type.Integer({ minimum: 0 }),
  /** Bytes of all files of the selection, counted before the work started (0: not known). */
  bytesTotal: Type.Integer({ minimum: 0 }),
  /** Entries (files, folders, links) done so far. */
  itemsDone: Type.Integer({ minimum: 0 }),
  /** Entries of the selection, counted before the work started (0: not known). */
  itemsTotal: Type.Integer({ minimum: 0 }),
  /** Why a failed job failed. */
  error: Type.Optional(Type.String()),
  /** The HTTP status the same failure answers on `PATCH /api/resources` (409: a conflict, 403: refused). */
  status: Type.Optional(Type.Integer()),
  /** Unix milliseconds. */
  startedAt: Type.Integer(),
});
export type Job = Static<typeof Job>;

/** `GET /api/raw/{path}?algo=…&progress=<id>`: the download is followed as the job `<id>`. */
export const ARCHIVE_PROGRESS_QUERY = 'progress';
