/**
 * schedule_executions: one row per run of a command schedule — SUCCEEDED (with what it
 * created), FAILED (with why), or SKIPPED (a tick deferred to the maintenance window, or
 * coalesced after downtime). Cloud tier only.
 */
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** schedule_executions.status values (mirrors SCHEDULE_EXECUTION_STATUSES). */
export type ScheduleExecutionStatus = 'SUCCEEDED' | 'FAILED' | 'SKIPPED';

/** One run of a schedule. */
export interface ScheduleExecutionRecord {
  executionId: string;
  scheduleId: string;
  scheduledFor: Date | null;
  startedAt: Date;
  finishedAt: Date | null;
  status: ScheduleExecutionStatus;
  result: unknown;
  error: string | null;
}

/** Record a run; call in the transaction that claimed it. */
export async function insertScheduleExecution(
  h: CloudHandle,
  execution: ScheduleExecutionRecord,
): Promise<void> {
  try {
    await h.cloud
      .insertInto('schedule_executions')
      .values({
        execution_id: execution.executionId,
        schedule_id: execution.scheduleId,
        scheduled_for: execution.scheduledFor ? h.codec.time(execution.scheduledFor) : null,
        started_at: h.codec.time(execution.startedAt),
        finished_at: execution.finishedAt ? h.codec.time(execution.finishedAt) : null,
        status: execution.status,
        result: h.codec.json(execution.result ?? {}),
        error: execution.error,
      })
      .execute();
  } catch (error) {
    throw translateDriverError(error, `record a run of schedule ${execution.scheduleId}`);
  }
}

const time = (h: CloudHandle, raw: unknown) =>
  raw === null || raw === undefined ? null : h.codec.parseTime(raw);

/** The latest runs of schedule `scheduleId`, newest first (at most `limit`, ≤ 500). */
export async function listScheduleExecutions(
  h: CloudHandle,
  scheduleId: string,
  limit = 100,
): Promise<ScheduleExecutionRecord[]> {
  try {
    const rows = await h.cloud
      .selectFrom('schedule_executions')
      .selectAll()
      .where('schedule_id', '=', scheduleId)
      .orderBy('started_at', 'desc')
      .orderBy('execution_id', 'desc')
      .limit(Math.min(Math.max(limit, 1), 500))
      .execute();
    return rows.map((r) => ({
      executionId: r.execution_id,
      scheduleId: r.schedule_id,
      scheduledFor: time(h, r.scheduled_for),
      startedAt: h.codec.parseTime(r.started_at),
      finishedAt: time(h, r.finished_at),
      status: r.status as ScheduleExecutionStatus,
      result: h.codec.parseJson(r.result) ?? {},
      error: r.error,
    }));
  } catch (error) {
    throw translateDriverError(error, `list runs of schedule ${scheduleId}`);
  }
}
