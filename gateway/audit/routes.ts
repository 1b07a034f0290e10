/**
 * The audit log API: `GET /api/v1/audit` (filters, full-text search, keyset pages; query.ts)
 * and `GET /api/v1/audit/export?format=jsonl|csv` (the same filters, streamed; export.ts).
 * Audit rows name people and their IP addresses: admins and operators read them, viewers
 * do not.
 */
import { z } from 'zod';
import { searchCommandAudit } from './store/commandAudit/index.js';
import type { GatewayContext } from '../context.js';
import { decodeNumberCursor, encodeNumberCursor } from '../numberCursor.js';
import { route } from '../route.js';
import { AUDIT_EXPORT_TYPES, auditExportStream } from './export.js';
import { auditJson, auditSchema } from './present.js';
import { auditFilter, auditFilterFields } from './query.js';

/** Who reads the audit log. */
export const AUDIT_READERS = ['admin', 'operator'] as const;
const tags = ['audit'];

/** Largest export. */
const MAX_EXPORT_ROWS = 1_000_000;

const listQuery = z.strictObject({
  ...auditFilterFields,
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(40).optional(),
});
const exportQuery = z.strictObject({
  ...auditFilterFields,
  format: z.enum(['jsonl', 'csv']).default('jsonl'),
  limit: z.coerce.number().int().min(1).max(MAX_EXPORT_ROWS).default(MAX_EXPORT_ROWS),
});

/** Register the audit log routes on `ctx`. */
export function registerAuditRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/audit',
      summary:
        'command audit log, newest first: filter by device, command, actor, event types, batch, broadcast and time; q= searches the text',
      tags,
      access: { roles: AUDIT_READERS },
      query: listQuery,
      response: z.object({ events: z.array(auditSchema), next_cursor: z.string().nullable() }),
    },
    async ({ query }) => {
      const rows = await searchCommandAudit(ctx.store, auditFilter(query), {
        limit: query.limit + 1,
        ...(query.cursor ? { beforeId: decodeNumberCursor(query.cursor) } : {}),
      });
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      return {
        events: page.map(auditJson),
        next_cursor: rows.length > query.limit && last ? encodeNumberCursor(last.id) : null,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/audit/export',
      summary:
        'export the audit rows matching the same filters, streamed as JSON lines (format=jsonl) or CSV (format=csv)',
      tags,
      access: { roles: AUDIT_READERS },
      query: exportQuery,
      mediaTypes: ['application/x-ndjson', 'text/csv'],
      responseHeaders: {
        'Content-Disposition': { description: 'attachment; audit-<time>.<format>', required: true },
        'Cache-Control': { description: 'no-store', required: true },
      },
    },
    async ({ query, reply }) => {
      const stamp = ctx
        .now()
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z');
      return reply
        .code(200)
        .header('content-type', AUDIT_EXPORT_TYPES[query.format])
        .header('content-disposition', `attachment; filename="audit-${stamp}.${query.format}"`)
        .header('cache-control', 'no-store')
        .send(auditExportStream(ctx.store, auditFilter(query), query.format, query.limit));
    },
  );
}
