import { ARCHIVE_FORMATS } from '@filebrowser/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { FileAccess } from '../../files/access.js';
import { archiveFormatOf, archiveStream, parseFilesParam, planArchive } from '../../files/archive/index.js';
import { queryValue } from '../resources/request-path.js';
import { contentDisposition, fileSecurityHeaders } from './send-file.js';

/**
 * Streams the archive of the folder `base`, or of the `files=` list under it, in the `algo`
 * format (contract 6.1). Nothing is built ahead: entries are read as the client takes them, and
 * a client that goes away stops the walk.
 */
export async function sendArchive(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  access: FileAccess,
  base: string,
): Promise<FastifyReply> {
  const format = archiveFormatOf(queryValue(request, 'algo'));
  const plan = await planArchive(access, parseFilesParam(base, queryValue(request, 'files')), ctx.log);
  const archive = archiveStream(format, plan.entries);
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) archive.abort();
  });
  archive.stream.once('error', (err) => ctx.log.warn({ err }, 'archive stream failed'));
  fileSecurityHeaders(reply, archive.contentType);
  void reply.header(
    'Content-Disposition',
    contentDisposition(plan.baseName + ARCHIVE_FORMATS[format], false),
  );
  return reply.code(200).type(archive.contentType).send(archive.stream);
}
