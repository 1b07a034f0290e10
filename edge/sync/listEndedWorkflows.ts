/**
 * The workflows that ended on this device since a point of its audit log, as summaries to
 * upload (runtime/saf/summary.ts). The point is an audit row id: a workflow ends with a
 * WORKFLOW_COMPLETED, WORKFLOW_FAILED or WORKFLOW_CANCELLED row, and SQLite has one writer,
 * so ids grow in commit order and "after id N" misses nothing that committed later. A
 * workflow retried and ended again gets a new row, and so a new summary.
 *
 * Each summary carries the workflow as it is now (a workflow retried since its end is
 * skipped: its next end will be listed), its state without card data or secrets
 * (edge/saf/finalState.ts), or — when that would exceed {@link MAX_SUMMARY_BYTES} — no state
 * and `state_omitted: true`.
 */
import {
  canonicalJson,
  isTerminalWorkflowStatus,
  MAX_SUMMARY_BYTES,
  translateDriverError,
  type JsonObject,
  type EdgeHandle,
  type WorkflowSummary,
} from '../../runtime/index.js';
import { sanitizeFinalState } from '../saf/finalState.js';

/** Audit events that end a workflow. */
const END_EVENTS = ['WORKFLOW_COMPLETED', 'WORKFLOW_FAILED', 'WORKFLOW_CANCELLED'] as const;

/** One page of ended workflows. */
export interface EndedWorkflows {
  summaries: WorkflowSummary[];
  /** The last audit row read: where the next page starts. Unchanged when nothing was read. */
  lastAuditId: number;
}

/** Summaries of workflows ended after audit row `afterAuditId`, reading at most `limit` rows. */
export async function listEndedWorkflows(
  h: EdgeHandle,
  afterAuditId: number,
  limit: number,
  secrets: readonly string[],
): Promise<EndedWorkflows> {
  let rows;
  try {
    rows = await h.db
      .selectFrom('workflow_audit_log as a')
      .innerJoin('workflow_executions as w', 'w.id', 'a.workflow_id')
      .select([
        'a.id as audit_id',
        'w.id',
        'w.workflow_type',
        'w.workflow_version',
        'w.status',
        'w.current_step_index',
        'w.current_step',
        'w.state',
        'w.created_at',
        'w.updated_at',
      ])
      .where('a.id', '>', afterAuditId)
      .where('a.event_type', 'in', END_EVENTS)
      .orderBy('a.id')
      .limit(limit)
      .execute();
  } catch (error) {
    throw translateDriverError(error, 'list ended workflows');
  }
  const byId = new Map<string, WorkflowSummary>();
  let lastAuditId = afterAuditId;
  for (const row of rows) {
    lastAuditId = Math.max(lastAuditId, h.codec.parseInt(row.audit_id));
    if (!isTerminalWorkflowStatus(row.status)) continue;
    const { state } = sanitizeFinalState(h.codec.parseJson(row.state) as JsonObject, secrets);
    const summary: WorkflowSummary = {
      workflow_id: row.id,
      workflow_type: row.workflow_type,
      ...(row.workflow_version ? { workflow_version: row.workflow_version } : {}),
      status: row.status,
      current_step_index: row.current_step_index,
      current_step: row.current_step,
      state,
      created_at: h.codec.parseTime(row.created_at).toISOString(),
      completed_at: h.codec.parseTime(row.updated_at).toISOString(),
    };
    byId.delete(row.id); // a later end of the same workflow goes last
    byId.set(
      row.id,
      Buffer.byteLength(canonicalJson(summary)) > MAX_SUMMARY_BYTES
        ? { ...summary, state: {}, state_omitted: true }
        : summary,
    );
  }
  return { summaries: [...byId.values()], lastAuditId };
}
