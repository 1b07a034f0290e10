/**
 * Streamed audit exports. Rows are read in keyset pages of 1,000 (newest first, as the list)
 * and written as they come, so an export of millions of rows holds one page in memory; a
 * client that goes away stops the reading. JSONL is one `auditJson` object per line
 * (`application/x-ndjson`); CSV has a header line and the same fields (`text/csv`, csv.ts).
 */
import { Readable } from 'node:stream';
import { type CloudHandle } from '../../runtime/index.js';
import {
  searchCommandAudit,
  type CommandAuditFilter,
  type CommandAuditRecord,
} from './store/commandAudit/index.js';
import { csvLine } from './csv.js';
import { AUDIT_CSV_COLUMNS, auditJson } from './present.js';

/** Export formats and their content types. */
export const AUDIT_EXPORT_TYPES = {
  jsonl: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
} as const;
/** An export format. */
export type AuditExportFormat = keyof typeof AUDIT_EXPORT_TYPES;

const PAGE = 1000;

async function* matchingRows(
  h: CloudHandle,
  filter: CommandAuditFilter,
  limit: number,
): AsyncGenerator<CommandAuditRecord> {
  let beforeId: number | undefined;
  let left = limit;
  while (left > 0) {
    const size = Math.min(PAGE, left);
    const page = await searchCommandAudit(h, filter, {
      limit: size,
      ...(beforeId !== undefined ? { beforeId } : {}),
    });
    yield* page;
    left -= page.length;
    const last = page.at(-1);
    if (page.length < size || !last) return;
    beforeId = last.id;
  }
}

async function* lines(
  h: CloudHandle,
  filter: CommandAuditFilter,
  format: AuditExportFormat,
  limit: number,
): AsyncGenerator<string> {
  if (format === 'csv') yield csvLine(AUDIT_CSV_COLUMNS);
  for await (const row of matchingRows(h, filter, limit)) {
    const json = auditJson(row);
    yield format === 'csv'
      ? csvLine(AUDIT_CSV_COLUMNS.map((column) => json[column]))
      : `${JSON.stringify(json)}\n`;
  }
}

/** A readable stream of the export of the rows matching `filter` (at most `limit`). */
export function auditExportStream(
  h: CloudHandle,
  filter: CommandAuditFilter,
  format: AuditExportFormat,
  limit: number,
): Readable {
  return Readable.from(lines(h, filter, format, limit), { objectMode: false });
}
