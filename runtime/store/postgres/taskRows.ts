/**
 * Rows of the JSON parameters the task statements read with `jsonb_to_recordset`
 * (finishTasksPostgres.ts, settleTasksPostgres.ts). Built as plain literals of one shape:
 * V8 copies spread objects of varying shapes on a slow path, which cost more than the rest
 * of a batch's preparation together.
 */
import type { AuditEvent } from '../audit/appendAuditEvents.js';
import type { TaskOutcome } from '../tasks/taskGroups.js';

/** How each finish is stored: a retry goes back to PENDING. */
export const STORED_STATUS = {
  COMPLETED: 'COMPLETED',
  FAILED: 'FAILED',
  RETRY: 'PENDING',
} as const;

/** An audit row, written if its task's outcome (`task`) or its workflow's settle (`settles`) is. */
export interface AuditRow {
  task: string | null;
  settles: string | null;
  wf: string;
  type: string;
  step: string | null;
  data: Record<string, unknown>;
  ts: Date;
  ord: number;
}

/** Append the row of `e` to `rows`; `wall` stands in for a missing timestamp. */
export function pushAuditRow(
  rows: AuditRow[],
  e: AuditEvent,
  owner: { task: string | null; settles: string | null },
  wall: Date,
): void {
  rows.push({
    task: owner.task,
    settles: owner.settles,
    wf: e.workflowId,
    type: e.eventType,
    step: e.stepName ?? null,
    data: e.eventData ?? {},
    ts: e.timestamp ?? wall,
    ord: rows.length,
  });
}

/**
 * An audit row of the settle statement (settleTasksPostgres.ts), as few bytes as it
 * takes: written if its completion's outcome is (`s` unset) or its completion's settle is
 * (`s` true); the completion is `o`, its 1-based place in the batch. The workflow (`wf`) and
 * time (`ts`) are left out when they are the completion's and the statement's.
 */
export interface CompactAuditRow {
  o: number;
  s: true | undefined;
  wf: string | undefined;
  type: string;
  step: string | undefined;
  data: Record<string, unknown>;
  ts: Date | undefined;
}

/** The compact row of `e`, owned by completion `o` (its settle's if `settle`) of workflow `wf`. */
export function compactAuditRow(
  e: AuditEvent,
  o: number,
  settle: boolean,
  wf: string,
): CompactAuditRow {
  // one literal, one shape: JSON.stringify leaves the undefined keys out
  return {
    o,
    s: settle ? true : undefined,
    wf: e.workflowId !== wf ? e.workflowId : undefined,
    type: e.eventType,
    step: e.stepName ?? undefined,
    data: e.eventData ?? {},
    ts: e.timestamp ?? undefined,
  };
}

/** A step log row, written if its task's outcome is. */
export interface LogRow {
  task: string;
  wf: string;
  step: string | null;
  level: string;
  message: string;
  data: Record<string, unknown>;
  ts: Date;
  ord: number;
}

/** The step log rows of `outcomes`, in order. */
export function logRows(outcomes: readonly TaskOutcome[], wall: Date): LogRow[] {
  const rows: LogRow[] = [];
  for (const o of outcomes)
    for (const l of o.logs)
      rows.push({
        task: o.taskId,
        wf: l.workflowId,
        step: l.stepName ?? null,
        level: l.level,
        message: l.message,
        data: l.data ?? {},
        ts: l.at ?? wall,
        ord: rows.length,
      });
  return rows;
}
