/**
 * PostgreSQL: record a batch of task outcomes in ONE statement. Data-modifying CTEs lock every
 * task of the outcomes' groups (`ORDER BY id FOR UPDATE`: one global lock order, so two
 * workers finishing tasks of the same groups queue behind each other and never deadlock),
 * update the tasks the worker still holds, and insert the audit rows and step logs of exactly
 * those (joined on the UPDATE's RETURNING). The statement returns every locked task as it
 * stands after the update. Rows travel as JSON arrays (`jsonb_to_recordset`), so the text is
 * the same for any batch size and is prepared once per connection.
 */
import { sql } from 'kysely';
import { type CachedStatement, executeCached } from '../cachedQuery.js';
import type { StoreHandle } from '../store.js';
import {
  type FinishedTasks,
  groupMembers,
  type TaskGroupRow,
  type TaskOutcome,
} from '../tasks/taskGroups.js';
import { type AuditRow, logRows, pushAuditRow, STORED_STATUS } from './taskRows.js';

/** Record `outcomes` of tasks `workerId` claimed; see tasks/finishTasks.ts. */
export async function finishTasksPostgres(
  h: StoreHandle,
  workerId: string,
  outcomes: readonly TaskOutcome[],
  now: Date,
): Promise<FinishedTasks> {
  const { parameters, compile } = finishTasksStatement(h, workerId, outcomes, now);
  const result = await executeCached(h, 'finishTasks', parameters, () => ({ compile }));
  return {
    recorded: new Set(result.rows.filter((r) => r.recorded).map((r) => r.id)),
    groups: groupMembers(h.codec, result.rows),
  };
}

/**
 * The statement of {@link finishTasksPostgres}. The group's tasks are found by
 * `workflow_id = ANY(ARRAY(…))`, which the planner answers from the workflow index: as a
 * join, statistics taken while the queue was nearly empty made it read the whole backlog for
 * every batch (10,000 tasks queued: half the throughput of a one-task-group completion).
 */
export function finishTasksStatement(
  h: StoreHandle,
  workerId: string,
  outcomes: readonly TaskOutcome[],
  now: Date,
): CachedStatement<TaskGroupRow & { recorded: boolean }> {
  const c = h.codec;
  const wall = new Date();
  const rows = outcomes.map((o) => ({
    id: o.taskId,
    wf: o.workflowId,
    grp: o.group,
    status: STORED_STATUS[o.finish.status],
    result: o.finish.status === 'COMPLETED' ? o.finish.result : null,
    error: o.finish.status === 'COMPLETED' ? null : o.finish.error,
    run_after: o.finish.status === 'RETRY' ? o.finish.runAfter : null,
  }));
  const audit: AuditRow[] = [];
  for (const o of outcomes) pushAuditRow(audit, o.audit, { task: o.taskId, settles: null }, wall);
  const logs = logRows(outcomes, wall);
  const parameters = [c.json(rows), c.time(now), workerId, c.json(audit), c.json(logs)];
  const p = (i: number) => parameters[i];
  return {
    parameters,
    compile: () =>
      sql<TaskGroupRow & { recorded: boolean }>`
      WITH v AS (
        SELECT * FROM jsonb_to_recordset(${p(0)}::jsonb) AS v(id uuid, wf uuid, grp text,
          status text, result jsonb, error text, run_after timestamptz)
      ),
      g AS (SELECT DISTINCT wf, grp FROM v),
      locked AS (
        SELECT t.id, t.workflow_id, t.parallel_group, t.status, t.result, t.error, t.task_index,
          t.function_path, t.context
        FROM tasks AS t
        WHERE t.workflow_id = ANY(ARRAY(SELECT wf FROM g))
          AND (t.workflow_id, COALESCE(t.parallel_group, t.id::text)) IN (SELECT wf, grp FROM g)
        ORDER BY t.id
        FOR UPDATE OF t
      ),
      done AS (
        UPDATE tasks AS t SET
          status = v.status,
          result = CASE WHEN v.status = 'COMPLETED' THEN v.result ELSE t.result END,
          error = v.error,
          completed_at = CASE WHEN v.status = 'PENDING' THEN t.completed_at ELSE ${p(1)}::timestamptz END,
          run_after = COALESCE(v.run_after, t.run_after),
          worker_id = CASE WHEN v.status = 'PENDING' THEN NULL ELSE t.worker_id END,
          claimed_at = CASE WHEN v.status = 'PENDING' THEN NULL ELSE t.claimed_at END,
          lease_expires_at = NULL
        FROM v JOIN locked AS l ON l.id = v.id
        WHERE t.id = v.id AND t.status = 'CLAIMED' AND t.worker_id = ${p(2)}
        RETURNING t.id, t.status, t.result, t.error
      ),
      audit AS (
        INSERT INTO workflow_audit_log (workflow_id, event_type, step_name, event_data, timestamp)
        SELECT a.wf, a.type, a.step, a.data, a.ts
        FROM jsonb_to_recordset(${p(3)}::jsonb) AS a(task uuid, wf uuid, type text, step text,
          data jsonb, ts timestamptz, ord int)
        WHERE a.task IN (SELECT id FROM done)
        ORDER BY a.ord
      ),
      logs AS (
        INSERT INTO workflow_execution_logs (workflow_id, step_name, level, message, data, logged_at)
        SELECT x.wf, x.step, x.level, x.message, x.data, x.ts
        FROM jsonb_to_recordset(${p(4)}::jsonb) AS x(task uuid, wf uuid, step text, level text,
          message text, data jsonb, ts timestamptz, ord int)
        WHERE x.task IN (SELECT id FROM done)
        ORDER BY x.ord
      )
      SELECT l.id, l.workflow_id, l.parallel_group, COALESCE(d.status, l.status) AS status,
        CASE WHEN d.id IS NULL THEN l.result ELSE d.result END AS result,
        CASE WHEN d.id IS NULL THEN l.error ELSE d.error END AS error,
        l.task_index, l.function_path, l.context, d.id IS NOT NULL AS recorded
      FROM locked AS l LEFT JOIN done AS d ON d.id = l.id`.compile(h.db),
  };
}
