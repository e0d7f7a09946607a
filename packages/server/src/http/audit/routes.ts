import { Readable } from 'node:stream';
import {
  AUDIT_DEFAULT_PAGE,
  AUDIT_MAX_PAGE,
  AuditExportQuery,
  AuditPage,
  AuditQuery,
  MEDIA,
} from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CSV_COLUMNS, csvLine, presentRecord } from '../../audit/present.js';
import type { ServerContext } from '../../services.js';
import { badRequest } from '../../errors.js';
import type { AuditFilter } from '../../store/audit.js';
import { ACCOUNT_CHANGES } from '../reach.js';
import { raw } from '../openapi/declare.js';

/** Records read per query while an export streams: the database is free between pages. */
const EXPORT_PAGE = 1000;

function filterOf(query: AuditQuery): AuditFilter {
  const filter: AuditFilter = {};
  if (query.user) filter.username = query.user;
  if (query.action) filter.action = query.action;
  if (query.path) {
    if (!query.path.startsWith('/')) throw badRequest('path must start with /');
    filter.pathPrefix = query.path;
  }
  if (query.from !== undefined) filter.from = Number(query.from);
  if (query.to !== undefined) filter.to = Number(query.to);
  if (query.cursor !== undefined) filter.beforeId = Number(query.cursor);
  return filter;
}

/**
 * `GET /api/audit` (a page, newest first) and `GET /api/audit/export?format=csv|json` (every
 * matching record, streamed page by page): administrators only, API tokens included only when
 * they keep the admin permission (a read-only token does not).
 */
export function auditRoutes(ctx: ServerContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/audit',
      {
        config: { reach: ACCOUNT_CHANGES, needs: 'admin' },
        schema: {
          summary: 'a page of the audit log, newest first (administrators)',
          querystring: AuditQuery,
          response: { 200: AuditPage },
        },
      },
      async (request) => {
        const limit = request.query.limit === undefined ? AUDIT_DEFAULT_PAGE : Number(request.query.limit);
        if (limit < 1 || limit > AUDIT_MAX_PAGE)
          throw badRequest(`limit must be between 1 and ${AUDIT_MAX_PAGE}`);
        // Records still queued are written first: the page shows everything done so far.
        await ctx.audit.flush();
        const rows = await ctx.store.audit.list(filterOf(request.query), limit + 1);
        const items = rows.slice(0, limit).map(presentRecord);
        return { items, next: rows.length > limit ? String(items[items.length - 1]!.id) : '' };
      },
    );

    app.get(
      '/api/audit/export',
      {
        config: { reach: ACCOUNT_CHANGES, needs: 'admin' },
        schema: {
          summary: 'every matching audit record as a CSV or JSON download (administrators)',
          querystring: AuditExportQuery,
          // Streamed page by page, so never serialized with a schema: raw bytes of either format.
          response: {
            200: raw(
              'the records as CSV, or as a JSON array of AuditEntry (an attachment)',
              MEDIA.csv,
              MEDIA.json,
            ),
          },
        },
      },
      async (request, reply) => {
        const { format, cursor: _cursor, limit: _limit, ...rest } = request.query;
        const filter = filterOf(rest);
        await ctx.audit.flush();
        const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
        const pages = exportPages(ctx, filter);
        const body =
          format === 'csv'
            ? (async function* () {
                yield CSV_COLUMNS.join(',') + '\r\n';
                for await (const page of pages) yield page.map(csvLine).join('');
              })()
            : (async function* () {
                yield '[';
                let first = true;
                for await (const page of pages) {
                  yield (first ? '' : ',') + page.map((e) => JSON.stringify(e)).join(',');
                  first = false;
                }
                yield ']\n';
              })();
        return reply
          .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8')
          .header('Content-Disposition', `attachment; filename="audit-${stamp}.${format}"`)
          .send(Readable.from(body, { objectMode: false }));
      },
    );
  };
}

/** The matching records, newest first, a page per query, until none is left. */
async function* exportPages(ctx: ServerContext, filter: AuditFilter) {
  let beforeId = filter.beforeId;
  for (;;) {
    const rows = await ctx.store.audit.list(
      { ...filter, ...(beforeId !== undefined && { beforeId }) },
      EXPORT_PAGE,
    );
    if (rows.length === 0) return;
    yield rows.map(presentRecord);
    if (rows.length < EXPORT_PAGE) return;
    beforeId = rows[rows.length - 1]!.id;
    // Other requests get the database between pages.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
