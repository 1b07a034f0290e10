import type { Selectable } from 'kysely';
import type { ScheduledWorkflowsTable } from '../database.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A cron registration made by a CRON_SCHEDULE step. */
export interface ScheduledWorkflow {
  id: string;
  scheduleName: string;
  cronExpression: string;
  targetWorkflowType: string;
  initialData: Record<string, unknown>;
  sourceWorkflowId: string | null;
  nextRunAt: Date | null;
}

/** Register a schedule, or update the one with the same name (it persists until removed). */
export async function upsertScheduledWorkflow(
  h: StoreHandle,
  s: ScheduledWorkflow,
  now = new Date(),
): Promise<void> {
  const row = {
    id: s.id,
    schedule_name: s.scheduleName,
    cron_expression: s.cronExpression,
    target_workflow_type: s.targetWorkflowType,
    initial_data_template: h.codec.json(s.initialData),
    status: 'ACTIVE',
    source_workflow_id: s.sourceWorkflowId,
    next_run_at: s.nextRunAt ? h.codec.time(s.nextRunAt) : null,
    updated_at: h.codec.time(now),
  };
  try {
    await h.db
      .insertInto('scheduled_workflows')
      .values(row)
      .onConflict((oc) =>
        oc.column('schedule_name').doUpdateSet({
          cron_expression: row.cron_expression,
          target_workflow_type: row.target_workflow_type,
          initial_data_template: row.initial_data_template,
          status: 'ACTIVE',
          source_workflow_id: row.source_workflow_id,
          next_run_at: row.next_run_at,
          updated_at: row.updated_at,
        }),
      )
      .execute();
  } catch (error) {
    throw translateDriverError(error, `register schedule ${s.scheduleName}`);
  }
}

/** A stored schedule. */
export interface StoredSchedule extends ScheduledWorkflow {
  status: string;
}

/** Decode a scheduled_workflows row. */
export function rowToSchedule(
  h: StoreHandle,
  r: Selectable<ScheduledWorkflowsTable>,
): StoredSchedule {
  return {
    id: r.id,
    scheduleName: r.schedule_name,
    cronExpression: r.cron_expression,
    targetWorkflowType: r.target_workflow_type,
    initialData: h.codec.parseJson(r.initial_data_template) as Record<string, unknown>,
    sourceWorkflowId: r.source_workflow_id,
    nextRunAt: r.next_run_at === null ? null : h.codec.parseTime(r.next_run_at),
    status: r.status,
  };
}

/** The schedule named `name`, or undefined. */
export async function getScheduledWorkflow(
  h: StoreHandle,
  name: string,
): Promise<StoredSchedule | undefined> {
  const r = await h.db
    .selectFrom('scheduled_workflows')
    .selectAll()
    .where('schedule_name', '=', name)
    .executeTakeFirst();
  return r && rowToSchedule(h, r);
}
