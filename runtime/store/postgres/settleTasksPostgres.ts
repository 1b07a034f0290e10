/**
 * Two verbs for task outcomes: *finishing* a task records its outcome (tasks/finishTasks.ts);
 * *settling* it records the outcome and moves its workflow on, as here.
 *
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
 * escaping every value of every row. The arrays carry each value once: keys of absent values
 * are left out, the ids the statement needs (to lock, to leave out of the claim, to delete
 * heartbeats) are read from the completions themselves, and an audit row names its
 * completion by its place in the batch, its workflow and time only where they differ — 13 KB
 * for 16 ASYNC completions instead of 22 KB, which the worker encodes and writes and the
 * server parses on every batch. Claimed tasks come back as rows of their own beside the
 * completions' results (`FULL JOIN … ON false`), in plain columns.
 */
import { sql } from 'kysely';
import { type CachedStatement, executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import type { TaskClaim } from '../tasks/claimTasks.js';
import { type ClaimedRow, type ClaimedTask, rowToClaimedTask } from '../tasks/claimedTask.js';
import type { TaskOutcome } from '../tasks/taskGroups.js';
import type { StepWrite } from '../workflows/stepWrite.js';
import { claimCtes } from './claimTasksPostgres.js';
import { type CompactAuditRow, compactAuditRow, logRows, STORED_STATUS } from './taskRows.js';

/** A task outcome, with the commit that settles its group if the task is the group's only one. */
export interface TaskSettlement extends TaskOutcome {
  /** Audit rows and heartbeat only: no metrics or logs. */
  settle?: StepWrite;
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
export async function settleTasksPostgres(
  h: StoreHandle,
  workerId: string,
  completions: readonly TaskSettlement[],
  now: Date,
  next?: TaskClaim,
): Promise<CompletedTasks> {
  const { key, parameters, compile } = settleTasksStatement(h, workerId, completions, now, next);
  let rows: CompleteRow[];
  try {
    rows = (await executeCached(h, key, parameters, () => ({ compile }))).rows;
  } catch (error) {
    throw translateDriverError(error, `complete ${completions.length} task(s)`);
  }
  const results: CompletedTasks['results'] = new Map();
  const claimed: ClaimedTask[] = [];
  for (const r of rows) {
    if (r.outcome === null) claimed.push(rowToClaimedTask(h.codec, r as ClaimedRow));
    else results.set(r.outcome, r.recorded ? 'recorded' : r.held ? 'deferred' : 'lost');
  }
  claimed.sort((a, b) => (a.taskIndex ?? 0) - (b.taskIndex ?? 0));
  return { results, claimed };
}

/** A completion as the statement reads it (`v`); absent keys are NULL. */
interface OutcomeRow {
  id: string;
  wf: string;
  grp: string;
  status: string;
  result: unknown;
  error: string | undefined;
  run_after: Date | undefined;
  expected: number | undefined;
  w_status: string | undefined;
  w_idx: number | undefined;
  w_step: string | undefined;
  w_state: unknown;
  w_snap: unknown;
  /** The settle deletes the workflow's heartbeat row. */
  w_gone: true | undefined;
}

/** A completion's result (`outcome` the task's id), or (`outcome` null) a claimed task. */
type CompleteRow = Partial<ClaimedRow> & {
  outcome: string | null;
  held: boolean | null;
  recorded: boolean | null;
};

/**
 * The statement of {@link settleTasksPostgres}, and its cache key (one text with a claim,
 * one without). It reads `tasks` by primary key and by the workflow index, also under
 * statistics taken while the queue was nearly empty (test/store/taskQueue.test.ts).
 */
export function settleTasksStatement(
  h: StoreHandle,
  workerId: string,
  completions: readonly TaskSettlement[],
  now: Date,
  next?: TaskClaim,
): CachedStatement<CompleteRow> & { key: string } {
  const wall = new Date();
  const c = h.codec;
  // keys of absent values are left out (undefined): `jsonb_to_recordset` reads them as NULL
  const outcomes: OutcomeRow[] = [];
  // a task's audit row is written with its outcome, a settle's with its workflow row; task
  // rows come first, so a workflow's TASK_COMPLETED precedes the STEP_EXECUTED it leads to
  const audit: CompactAuditRow[] = [];
  const settleAudit: CompactAuditRow[] = [];
  const beats: { wf: string; worker: string; ts: Date; step: string | null }[] = [];
  for (let i = 0; i < completions.length; i++) {
    const x = completions[i]!;
    const settle = x.settle;
    const u = settle?.update;
    if (settle && u) {
      if (settle.metrics.length > 0 || settle.logs.length > 0 || settle.create)
        throw new Error(`settleTasksPostgres: the settle of ${u.id} writes more than a step`);
      if (u.id !== x.workflowId)
        throw new Error(
          `settleTasksPostgres: task ${x.taskId} of workflow ${x.workflowId} settles workflow ${u.id}`,
        );
      if (typeof settle.heartbeat === 'object')
        beats.push({
          wf: settle.heartbeat.workflowId,
          worker: settle.heartbeat.workerId,
          ts: settle.heartbeat.at ?? wall,
          step: settle.heartbeat.currentStep ?? null,
        });
      for (const e of settle.audit) settleAudit.push(compactAuditRow(e, i + 1, true, u.id));
    }
    audit.push(compactAuditRow(x.audit, i + 1, false, x.workflowId));
    const finish = x.finish;
    // one literal, one shape: JSON.stringify leaves the undefined keys out
    const row: OutcomeRow = {
      id: x.taskId,
      wf: x.workflowId,
      grp: x.group,
      status: STORED_STATUS[finish.status],
      result: finish.status === 'COMPLETED' ? finish.result : undefined,
      error: finish.status === 'COMPLETED' ? undefined : finish.error,
      run_after: finish.status === 'RETRY' ? finish.runAfter : undefined,
      expected: u?.expectedVersion,
      w_status: u?.status,
      w_idx: u?.currentStepIndex,
      w_step: u?.currentStep ?? undefined,
      w_state: u?.state,
      w_snap: u?.actorSnapshot ?? undefined,
      w_gone: settle?.heartbeat === 'delete' ? true : undefined,
    };
    outcomes.push(row);
  }
  for (const row of settleAudit) audit.push(row);
  const logs = logRows(completions, wall);
  const parameters: unknown[] = [
    c.json(outcomes),
    workerId,
    c.time(now),
    c.time(now),
    c.time(wall),
    c.json(audit),
    c.json(logs),
    c.json(beats),
  ];
  const claim = next
    ? claimCtes(
        h,
        next,
        sql`(SELECT count(*) FROM held WHERE id NOT IN (SELECT id FROM done))::int`,
        sql`ARRAY(SELECT id FROM v)`,
      )
    : undefined;
  if (claim) parameters.push(...claim.parameters);
  const p = (i: number) => parameters[i];
  // regions travel as one array parameter: one text with or without them
  const key = next ? 'settleTasks:claim' : 'settleTasks';
  const compile = () =>
    sql<CompleteRow>`
      WITH v AS (
        SELECT * FROM ROWS FROM (jsonb_to_recordset(${p(0)}::jsonb) AS (id uuid, wf uuid,
          grp text, status text, result jsonb, error text, run_after timestamptz, expected int,
          w_status text, w_idx int, w_step text, w_state jsonb, w_snap jsonb, w_gone boolean))
          WITH ORDINALITY AS v
      ),
      locked AS (
        SELECT t.id, t.status, t.worker_id FROM tasks AS t
        WHERE t.id = ANY(ARRAY(SELECT id FROM v))
        ORDER BY t.id
        FOR UPDATE
      ),
      held AS (SELECT id FROM locked WHERE status = 'CLAIMED' AND worker_id = ${p(1)}),
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
          completed_at = CASE WHEN r.status = 'PENDING' THEN t.completed_at ELSE ${p(2)}::timestamptz END,
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
          updated_at = ${p(3)}::timestamptz
        FROM settled AS s
        WHERE w.id = s.wf AND w.version = s.expected
        RETURNING w.id
      ),
      audit AS (
        INSERT INTO workflow_audit_log (workflow_id, event_type, step_name, event_data, timestamp)
        SELECT COALESCE(a.wf, o.wf), a.type, a.step, a.data, COALESCE(a.ts, ${p(4)}::timestamptz)
        FROM ROWS FROM (jsonb_to_recordset(${p(5)}::jsonb) AS (o int, s boolean, wf uuid,
          type text, step text, data jsonb, ts timestamptz)) WITH ORDINALITY AS a
        JOIN v AS o ON o.ordinality = a.o
        WHERE CASE WHEN a.s THEN o.wf IN (SELECT id FROM up) ELSE o.id IN (SELECT id FROM done) END
        ORDER BY a.ordinality
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
        WHERE workflow_id = ANY(ARRAY(SELECT id FROM up WHERE id IN (SELECT wf FROM v WHERE w_gone)))
      )${claim ? sql`,${claim.ctes}` : sql``}
      SELECT r.*${claim ? sql`, c.*` : sql``} FROM (
        SELECT v.id AS outcome, h.id IS NOT NULL AS held, d.id IS NOT NULL AS recorded
        FROM v LEFT JOIN held AS h ON h.id = v.id LEFT JOIN done AS d ON d.id = v.id
      ) AS r${claim ? sql` FULL JOIN claimed AS c ON false` : sql``}`.compile(h.db);
  return { key, parameters, compile };
}
