/**
 * PostgreSQL: record task outcomes and settle the workflows they finish, in ONE statement (one
 * implicit transaction, one round trip) for the common case — a task that is its group's only
 * task (an ASYNC step) or a retry. The caller prepares each settle beforehand from the
 * workflow row it read at the claim; the statement applies it only if, under row locks:
 *
 * - the worker still holds the task (a task whose lease expired and was taken over is not
 *   recorded: `lost`),
 * - the task really is its group's only task, and
 * - the workflow is still at the version the settle was prepared from.
 *
 * An outcome whose settle does not apply is not recorded either (`deferred`): the caller
 * records it the general way (tasks/finishTasks.ts, in a transaction that reads the group and
 * the workflow afresh). So an outcome and the settle it implies are always written together,
 * with their audit rows, or not at all.
 *
 * Locks are taken tasks first, then workflows, each in id order, as every other completion
 * path does. Rows travel as JSON arrays (`jsonb_to_recordset`): the text is the same for any
 * batch size and is prepared once per connection, and one JSON.stringify per batch replaces
 * escaping every value of every row.
 */
import { sql } from 'kysely';
import { type CachedStatement, executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import type { TaskClaim } from '../tasks/claimTasks.js';
import { type ClaimedRow, type ClaimedTask, rowToClaimedTask } from '../tasks/claimedTask.js';
import type { TaskOutcome } from '../tasks/taskGroups.js';
import type { StepCommit } from '../workflows/stepCommit.js';
import { claimCtes } from './claimTasksPostgres.js';
import { type AuditRow, logRows, pushAuditRow, STORED_STATUS } from './taskRows.js';

/** A task outcome, with the commit that settles its group if the task is the group's only one. */
export interface TaskCompletion extends TaskOutcome {
  /** Audit rows and heartbeat only: no metrics or logs. */
  settle?: StepCommit;
}

/** What became of each completion, and the tasks claimed with them. */
export interface CompletedTasks {
  /** By task id. */
  results: Map<string, 'recorded' | 'deferred' | 'lost'>;
  /** Tasks the statement claimed (see `next`), in declaration order within a group. */
  claimed: ClaimedTask[];
}

/**
 * Record `completions` of tasks `workerId` claimed, applying their settles; see above. With
 * `next`, the statement also claims up to `next.limit` tasks for the slots the completions
 * free, less one per deferred completion (whose slot stays taken), so a busy worker needs no
 * separate claim between batches.
 */
export async function completeTasksPostgres(
  h: StoreHandle,
  workerId: string,
  completions: readonly TaskCompletion[],
  now: Date,
  next?: TaskClaim,
): Promise<CompletedTasks> {
  const { key, parameters, compile } = completeTasksStatement(h, workerId, completions, now, next);
  let rows: CompleteRow[];
  try {
    rows = (await executeCached(h, key, parameters, () => ({ compile }))).rows;
  } catch (error) {
    throw translateDriverError(error, `complete ${completions.length} task(s)`);
  }
  const results: CompletedTasks['results'] = new Map();
  const claimed: ClaimedTask[] = [];
  for (const r of rows) {
    if (r.task) claimed.push(rowToClaimedTask(h.codec, r.task as ClaimedRow));
    else if (r.id) results.set(r.id, r.recorded ? 'recorded' : r.held ? 'deferred' : 'lost');
  }
  claimed.sort((a, b) => (a.taskIndex ?? 0) - (b.taskIndex ?? 0));
  return { results, claimed };
}

type CompleteRow = {
  id: string | null;
  held: boolean | null;
  recorded: boolean | null;
  task: unknown;
};

/**
 * The statement of {@link completeTasksPostgres}, and its cache key (one text with a claim,
 * one without). It reads `tasks` by primary key and by the workflow index, also under
 * statistics taken while the queue was nearly empty (test/store/taskQueue.test.ts).
 */
export function completeTasksStatement(
  h: StoreHandle,
  workerId: string,
  completions: readonly TaskCompletion[],
  now: Date,
  next?: TaskClaim,
): CachedStatement<CompleteRow> & { key: string } {
  const wall = new Date();
  const settles = completions.flatMap((x) => (x.settle ? [x.settle] : []));
  for (const s of settles)
    if (s.metrics.length > 0 || s.logs.length > 0 || s.create)
      throw new Error(
        `completeTasksPostgres: the settle of ${s.update.id} writes more than a step`,
      );
  const outcomes = completions.map((x) => {
    const u = x.settle?.update;
    return {
      id: x.taskId,
      wf: x.workflowId,
      grp: x.group,
      status: STORED_STATUS[x.finish.status],
      result: x.finish.status === 'COMPLETED' ? x.finish.result : null,
      error: x.finish.status === 'COMPLETED' ? null : x.finish.error,
      run_after: x.finish.status === 'RETRY' ? x.finish.runAfter : null,
      expected: u ? u.expectedVersion : null,
      w_status: u ? u.status : null,
      w_idx: u ? u.currentStepIndex : null,
      w_step: u ? u.currentStep : null,
      w_state: u ? u.state : null,
      w_snap: u ? u.actorSnapshot : null,
    };
  });
  // a task's audit row is written with its outcome, a settle's with its workflow row; task
  // rows come first, so a workflow's TASK_COMPLETED precedes the STEP_EXECUTED it leads to
  const audit: AuditRow[] = [];
  for (const x of completions)
    pushAuditRow(audit, x.audit, { task: x.taskId, settles: null }, wall);
  for (const s of settles)
    for (const e of s.audit) pushAuditRow(audit, e, { task: null, settles: s.update.id }, wall);
  const logs = logRows(completions, wall);
  const beats = settles.flatMap((s) =>
    typeof s.heartbeat === 'object'
      ? [
          {
            wf: s.heartbeat.workflowId,
            worker: s.heartbeat.workerId,
            ts: s.heartbeat.at ?? wall,
            step: s.heartbeat.currentStep ?? null,
          },
        ]
      : [],
  );
  const gone = settles.filter((s) => s.heartbeat === 'delete').map((s) => s.update.id);
  const c = h.codec;
  const taskIds = completions.map((x) => x.taskId);
  const parameters: unknown[] = [
    c.json(outcomes),
    taskIds,
    workerId,
    c.time(now),
    c.time(now),
    c.json(audit),
    c.json(logs),
    c.json(beats),
    gone,
  ];
  const claim = next
    ? claimCtes(
        h,
        next,
        sql`(SELECT count(*) FROM held WHERE id NOT IN (SELECT id FROM done))::int`,
        taskIds,
      )
    : undefined;
  if (claim) parameters.push(...claim.parameters);
  const p = (i: number) => parameters[i];
  // regions travel as one array parameter: one text with or without them
  const key = next ? 'completeTasks:claim' : 'completeTasks';
  const compile = () =>
    sql<CompleteRow>`
      WITH v AS (
        SELECT * FROM jsonb_to_recordset(${p(0)}::jsonb) AS v(id uuid, wf uuid, grp text,
          status text, result jsonb, error text, run_after timestamptz, expected int,
          w_status text, w_idx int, w_step text, w_state jsonb, w_snap jsonb)
      ),
      locked AS (
        SELECT t.id, t.status, t.worker_id FROM tasks AS t
        WHERE t.id = ANY(${p(1)}::uuid[])
        ORDER BY t.id
        FOR UPDATE
      ),
      held AS (SELECT id FROM locked WHERE status = 'CLAIMED' AND worker_id = ${p(2)}),
      alone AS (
        SELECT v.id, v.wf FROM v JOIN held AS h ON h.id = v.id
        WHERE v.expected IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM tasks AS o
          WHERE o.workflow_id = v.wf AND COALESCE(o.parallel_group, o.id::text) = v.grp AND o.id <> v.id)
      ),
      current AS (
        SELECT w.id, w.version FROM workflow_executions AS w
        WHERE w.id IN (SELECT wf FROM alone)
        ORDER BY w.id
        FOR UPDATE
      ),
      settled AS (
        SELECT v.* FROM v
        JOIN alone AS a ON a.id = v.id
        JOIN current AS cur ON cur.id = v.wf AND cur.version = v.expected
      ),
      recorded AS (
        SELECT v.* FROM v JOIN held AS h ON h.id = v.id
        WHERE v.expected IS NULL OR v.id IN (SELECT id FROM settled)
      ),
      done AS (
        UPDATE tasks AS t SET
          status = r.status,
          result = CASE WHEN r.status = 'COMPLETED' THEN r.result ELSE t.result END,
          error = r.error,
          completed_at = CASE WHEN r.status = 'PENDING' THEN t.completed_at ELSE ${p(3)}::timestamptz END,
          run_after = COALESCE(r.run_after, t.run_after),
          worker_id = CASE WHEN r.status = 'PENDING' THEN NULL ELSE t.worker_id END,
          claimed_at = CASE WHEN r.status = 'PENDING' THEN NULL ELSE t.claimed_at END,
          lease_expires_at = NULL
        FROM recorded AS r
        WHERE t.id = r.id
        RETURNING t.id
      ),
      up AS (
        UPDATE workflow_executions AS w SET
          status = s.w_status, current_step_index = s.w_idx, current_step = s.w_step,
          state = s.w_state, actor_snapshot = s.w_snap, version = s.expected + 1,
          updated_at = ${p(4)}::timestamptz
        FROM settled AS s
        WHERE w.id = s.wf AND w.version = s.expected
        RETURNING w.id
      ),
      audit AS (
        INSERT INTO workflow_audit_log (workflow_id, event_type, step_name, event_data, timestamp)
        SELECT a.wf, a.type, a.step, a.data, a.ts
        FROM jsonb_to_recordset(${p(5)}::jsonb) AS a(task uuid, settles uuid, wf uuid, type text,
          step text, data jsonb, ts timestamptz, ord int)
        WHERE a.task IN (SELECT id FROM done) OR a.settles IN (SELECT id FROM up)
        ORDER BY a.ord
      ),
      logs AS (
        INSERT INTO workflow_execution_logs (workflow_id, step_name, level, message, data, logged_at)
        SELECT x.wf, x.step, x.level, x.message, x.data, x.ts
        FROM jsonb_to_recordset(${p(6)}::jsonb) AS x(task uuid, wf uuid, step text, level text,
          message text, data jsonb, ts timestamptz, ord int)
        WHERE x.task IN (SELECT id FROM done)
        ORDER BY x.ord
      ),
      beats AS (
        INSERT INTO workflow_heartbeats (workflow_id, worker_id, last_heartbeat, current_step, step_started_at)
        SELECT x.wf, x.worker, x.ts, x.step, x.ts
        FROM jsonb_to_recordset(${p(7)}::jsonb) AS x(wf uuid, worker text, ts timestamptz, step text)
        WHERE x.wf IN (SELECT id FROM up)
        ON CONFLICT (workflow_id) DO UPDATE SET worker_id = excluded.worker_id,
          last_heartbeat = excluded.last_heartbeat, current_step = excluded.current_step,
          step_started_at = excluded.step_started_at
      ),
      gone AS (
        DELETE FROM workflow_heartbeats
        WHERE workflow_id = ANY(ARRAY(SELECT id FROM up WHERE id = ANY(${p(8)}::uuid[])))
      )${claim ? sql`,${claim.ctes}` : sql``}
      SELECT v.id, h.id IS NOT NULL AS held, d.id IS NOT NULL AS recorded, NULL::jsonb AS task
      FROM v LEFT JOIN held AS h ON h.id = v.id LEFT JOIN done AS d ON d.id = v.id
      ${claim ? sql`UNION ALL SELECT NULL, NULL, NULL, to_jsonb(claimed) FROM claimed` : sql``}`.compile(
      h.db,
    );
  return { key, parameters, compile };
}
