/**
 * How engine commands show workflows: a compact block (or one JSON object) for one
 * workflow, audit lines for `show`, a table for `list`. JSON keys are the database's
 * snake_case column names, so output and SQL read the same.
 */
import { auditEventJson as auditJson, workflowError, workflowJson } from '../actors/index.js';
import type { StoredAuditEvent, WorkflowRecord } from '../runtime/index.js';
import { type CliIo, printJson, printRows } from './io.js';
import { versionSuffix } from './versionSuffix.js';

function block(record: WorkflowRecord): string {
  const error = workflowError(record);
  const rows: [string, string][] = [
    ['id', record.id],
    ['type', `${record.workflowType}${versionSuffix(record.workflowVersion)}`],
    ['status', record.status],
    ['current step', record.currentStep ?? '-'],
  ];
  if (record.parentWorkflowId) rows.push(['parent', record.parentWorkflowId]);
  if (error)
    rows.push([
      'error',
      `${error.code ?? 'ERROR'}: ${error.message ?? ''}${error.step ? ` (at ${error.step})` : ''}`,
    ]);
  rows.push(['updated', record.updatedAt.toISOString()]);
  const lines = rows.map(([k, v]) => `${k.padEnd(13)} ${v}`);
  lines.push('state:', JSON.stringify(record.state, null, 2).replace(/^/gm, '  '));
  return `${lines.join('\n')}\n`;
}

/** Print one workflow: a block, or with `json` one JSON object. */
export function printWorkflow(io: CliIo, record: WorkflowRecord, json: boolean): void {
  if (json) printJson(io, workflowJson(record));
  else io.stdout.write(block(record));
}

/** Print a workflow with its audit trail (`show`). */
export function printWorkflowWithAudit(
  io: CliIo,
  record: WorkflowRecord,
  audit: readonly StoredAuditEvent[],
  json: boolean,
): void {
  if (json) {
    printJson(io, { ...workflowJson(record), audit: audit.map(auditJson) });
    return;
  }
  io.stdout.write(block(record));
  io.stdout.write(`audit trail (${audit.length} event(s)):\n`);
  const typeWidth = Math.max(0, ...audit.map((e) => e.eventType.length));
  const stepWidth = Math.max(1, ...audit.map((e) => (e.stepName ?? '-').length));
  for (const e of audit) {
    const data = Object.keys(e.eventData).length ? `  ${JSON.stringify(e.eventData)}` : '';
    io.stdout.write(
      `  ${e.timestamp.toISOString()}  ${e.eventType.padEnd(typeWidth)}  ${(e.stepName ?? '-').padEnd(stepWidth)}${data}`.trimEnd() +
        '\n',
    );
  }
}

/** Print workflows as a table (`list`), or with `json` as `{workflows: [...]}`. */
export function printWorkflowTable(
  io: CliIo,
  records: readonly WorkflowRecord[],
  json: boolean,
): void {
  if (json) {
    printJson(io, { workflows: records.map(workflowJson) });
    return;
  }
  if (records.length === 0) {
    io.stdout.write('no workflows\n');
    return;
  }
  const rows = [
    ['ID', 'TYPE', 'STATUS', 'CURRENT STEP', 'UPDATED'],
    ...records.map((r) => [
      r.id,
      r.workflowType,
      r.status,
      r.currentStep ?? '-',
      r.updatedAt.toISOString(),
    ]),
  ];
  printRows(io, rows);
}
