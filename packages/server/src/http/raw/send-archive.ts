import { ARCHIVE_FORMATS, ARCHIVE_PROGRESS_QUERY, JOB_ID_PATTERN } from '@filebrowser/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { whileAllowed, type Caller } from '../../auth/caller.js';
import type { ServerContext } from '../../services.js';
import { badRequest, unauthorized } from '../../errors.js';
import type { FileAccess } from '../../files/access/access.js';
import {
  archiveFormatOf,
  archiveStream,
  parseFilesParam,
  planArchive,
  type ArchiveEntry,
} from '../../files/archive/index.js';
import { measure, type Measure } from '../../files/access/tree.js';
import type { JobRecord } from '../../jobs/registry.js';
import { clientGone, onResponseClosed } from '../client-gone.js';
import { heavyTurn } from '../heavy.js';
import { queryValue } from '../resources/request-path.js';
import { contentDisposition, fileSecurityHeaders } from './send-file.js';
import { inBackground } from '../../background.js';

const jobId = new RegExp(JOB_ID_PATTERN);

/** Bytes of the files an archive of `paths` will read, walked as the archive walks (a bounded walk). */
async function measureArchive(access: FileAccess, paths: string[], signal: AbortSignal): Promise<Measure> {
  const total: Measure = { bytes: 0, items: 0, partial: false };
  for (const p of paths) {
    const r = await access.open(p).catch(() => undefined);
    if (!r) continue;
    try {
      await measure(access, r, { follow: true, signal, include: (e) => access.checkResolved(e) }, total);
    } finally {
      await r.close();
    }
  }
  return total;
}

/** The members, each telling the job of the bytes read from it. */
async function* counted(
  entries: AsyncIterable<ArchiveEntry>,
  record: JobRecord,
): AsyncGenerator<ArchiveEntry> {
  for await (const entry of entries) {
    yield { ...entry, onRead: (bytes) => record.advance(bytes, 0) };
    await record.advance(0, 1);
  }
}

/**
 * Streams the archive of the folder `base`, or of the `files=` list under it, in the `algo`
 * format (contract 6.1). Nothing is built ahead: entries are read as the client takes them, and
 * a client that goes away stops the walk. With `progress=<id>` the download is also the job
 * `<id>` of the user: bytes of files read against the total counted first, and cancelling the
 * job ends the response as a client going away would.
 */
export async function sendArchive(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  access: FileAccess,
  base: string,
  /**
   * Who asks, asked again before every member: a signed-in caller, or a share link's visitor
   * (`PublicShares.visitor`), who cannot follow the download as a job of the link's owner.
   */
  who: { caller: Caller; signedIn: boolean },
): Promise<FastifyReply> {
  const format = archiveFormatOf(queryValue(request, 'algo'));
  const paths = parseFilesParam(base, queryValue(request, 'files'));
  const progressId = queryValue(request, ARCHIVE_PROGRESS_QUERY);
  if (progressId !== undefined && !jobId.test(progressId)) {
    throw badRequest(`${ARCHIVE_PROGRESS_QUERY} must match ${JOB_ID_PATTERN}`);
  }
  // Heard before the first await: a client gone while the archive is planned or measured must
  // still end its job, or the job holds one of the user's few slots and a closing server waits
  // for it forever.
  let closed!: () => void;
  const responseClosed = new Promise<void>((resolve) => (closed = resolve));
  onResponseClosed(reply.raw, () => closed());
  const gone = clientGone(reply);
  // An archive reads and compresses a whole tree: heavy work, in its user's turn (http/heavy.ts).
  await heavyTurn(ctx, request, reply);
  const plan = await planArchive(access, paths, ctx.log);
  // Each member is read only while the caller may still download it (auth/caller.ts).
  const members = whileAllowed(plan.entries, who.caller);
  let record: JobRecord | undefined;
  if (progressId !== undefined) {
    if (!who.signedIn) throw unauthorized('only a signed-in download can be followed as a job');
    record = await ctx.jobs.start(who.caller, {
      id: progressId,
      action: 'archive',
      items: paths,
      destination: '',
    });
    try {
      record.measured(await measureArchive(access, paths, AbortSignal.any([record.signal, gone])));
    } catch (err) {
      record.finish(err);
      throw err;
    }
  }
  const archive = archiveStream(format, record ? counted(members, record) : members);
  let produced = false;
  archive.stream.once('end', () => (produced = true));
  const responseEnded = responseClosed.then(() => {
    const whole = produced || reply.raw.writableFinished;
    if (!whole) {
      archive.abort();
      record?.cancel();
    }
    return whole;
  });
  if (record) {
    const job = record;
    // A cancelled job cuts the response: the browser sees a failed download, the walk stops.
    // Also one cancelled while it was being measured: an aborted signal fires no more events.
    const cut = () => {
      archive.abort();
      reply.raw.destroy();
    };
    if (job.signal.aborted) cut();
    else job.signal.addEventListener('abort', cut);
    // Ended once the files are let go, so that whoever waits for the job finds them closed.
    const ended = Promise.all([responseEnded, archive.released]).then(([whole]) =>
      job.finish(whole ? undefined : new Error('the download was cut short')),
    );
    inBackground(ended, (err) => ctx.log.warn({ err }, 'archive job could not be ended'));
  }
  archive.stream.once('error', (err) => ctx.log.warn({ err }, 'archive stream failed'));
  fileSecurityHeaders(reply, archive.contentType);
  void reply.header(
    'Content-Disposition',
    contentDisposition(plan.baseName + ARCHIVE_FORMATS[format], false),
  );
  return reply.code(200).type(archive.contentType).send(archive.stream);
}
