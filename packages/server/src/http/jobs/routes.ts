import { Type } from '@sinclair/typebox';
import { Job, JobParams, JobStart, JobStarted } from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { patchOperations } from '../../auth/policy.js';
import type { ServerContext } from '../../services.js';
import { notFound } from '../../errors.js';
import type { FileEvents } from '../../files/change/events.js';
import { recordOutcome } from '../../audit/http.js';
import { callerOf, currentUser } from '../guards.js';
import { FILE_CHANGES, FILES } from '../reach.js';
import { runTransferJob } from './run-transfer.js';
import { inBackground } from '../../background.js';

/**
 * `/api/jobs`: copies and moves that run while the client follows them, and the
 * progress of archive downloads. The synchronous `PATCH /api/resources` stays as it was; a job
 * does the same work through the same code, reporting progress and stoppable. Another user's
 * job is "not found".
 */
export function jobsRoutes(ctx: ServerContext, events: FileEvents = {}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('onClose', () => ctx.jobs.cancelAll());

    app.post(
      '/api/jobs',
      {
        schema: {
          summary: 'start copying or moving items into a folder, as a job the client follows',
          body: JobStart,
          response: { 202: JobStarted },
        },
        // each item is recorded when it ends (run-transfer.ts); starting changes nothing yet
        config: { reach: FILE_CHANGES, audit: false },
      },
      async (request, reply) => {
        const body = request.body;
        // The permissions of the same PATCH, checked now and again as the job goes: the job keeps
        // its caller, never the user as it is now (auth/caller.ts).
        const caller = await callerOf(
          ctx,
          request,
          patchOperations(body.action, body.override ?? false) ?? [],
        );
        const record = await ctx.jobs.start(caller, {
          action: body.action,
          items: body.items,
          destination: body.destination,
        });
        const job = runTransferJob(ctx, body, record, events, (status, draft) =>
          recordOutcome(ctx, request, status, draft),
        );
        inBackground(job, (err) => ctx.log.error({ err, job: record.job.id }, 'job failed'));
        return reply.code(202).send({ id: record.job.id });
      },
    );

    app.get(
      '/api/jobs',
      {
        config: { reach: FILES },
        schema: {
          summary: 'the caller’s running jobs (on every instance)',
          response: { 200: Type.Array(Job) },
        },
      },
      async (request) => ctx.jobs.running(currentUser(request)),
    );

    app.get(
      '/api/jobs/:id',
      {
        config: { reach: FILES },
        schema: {
          summary: 'how far a job is (a copy, a move or a followed archive download)',
          params: JobParams,
          response: { 200: Job },
        },
      },
      async (request) => {
        const job = await ctx.jobs.find(currentUser(request), request.params.id);
        if (!job) throw notFound();
        return job;
      },
    );

    app.delete(
      '/api/jobs/:id',
      {
        schema: {
          summary: 'cancel a job: answered once it has stopped and removed what it had made',
          params: JobParams,
          response: { 200: Job },
        },
        // the item a cancel stops is recorded as cancelled by the job itself
        config: { reach: FILE_CHANGES, audit: false },
      },
      async (request) => {
        // Answered once the work has stopped and removed what it had made, on whichever instance.
        const job = await ctx.jobs.cancel(currentUser(request), request.params.id);
        if (!job) throw notFound();
        return job;
      },
    );
  };
}
