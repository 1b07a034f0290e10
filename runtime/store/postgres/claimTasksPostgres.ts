/**
 * PostgreSQL task claim: the classic queue pattern — lock the oldest due rows with FOR UPDATE
 * SKIP LOCKED (concurrent workers never block on or double-claim a row) and mark them CLAIMED
 * with a lease, in one statement that returns the claimed rows. The candidates come from
 * `saffron_claimable_tasks()` (migration 0008): tasks whose lease expired first, then PENDING
 * tasks in `run_after` order, each set an ordered walk of its own partial index that stops at
 * the limit — never a read of the whole backlog or of finished tasks, whatever the planner's
 * statistics say. Tasks due at the same moment go in index order. SKIP LOCKED also keeps the
 * takeover clear of a completion that holds its group's rows. Each claimed task comes with
 * its workflow row (its columns as `w_…`, without the definition snapshot: a completion uses
 * the machine compiled from it, cached by definition hash), so completing it needs no read. The picked
 * ids reach the UPDATE as one array (`id = ANY(ARRAY(…))`), which the planner answers from
 * the primary key: as a join, statistics taken while the queue was nearly empty made it hash
 * the whole backlog on every claim (with 8,000 tasks queued: 2.3 ms per completion statement
 * instead of 1.4 ms).
 *
 * The claim is a set of CTEs ending in `claimed`, so a completion can claim the next tasks in
 * its own statement (postgres/settleTasksPostgres.ts).
 */
import { sql, type RawBuilder } from 'kysely';
import type { StoreHandle } from '../store.js';
import type { ClaimStatement, TaskClaim } from '../tasks/claimTasks.js';
import { type ClaimedRow, claimedColumns, claimedWorkflowColumns } from '../tasks/claimedTask.js';

/** Claim CTEs and their parameters, in the order they appear. */
export interface ClaimCtes {
  ctes: RawBuilder<unknown>;
  parameters: unknown[];
}

/**
 * CTEs that claim up to `claim.limit` tasks, less `fewer` (a parameterless SQL count) when
 * given, never the tasks `exclude` names (ids, or a parameterless SQL expression of a
 * `uuid[]`); the last, `claimed`, returns the claimed rows.
 */
export function claimCtes(
  h: StoreHandle,
  claim: TaskClaim,
  fewer: RawBuilder<unknown> = sql`0`,
  exclude: readonly string[] | RawBuilder<unknown> = [],
): ClaimCtes {
  const now = h.codec.time(claim.now);
  const lease = h.codec.time(new Date(claim.now.getTime() + claim.leaseMs));
  const regions = claim.regions ? [...claim.regions] : null;
  const excludeSql = 'toOperationNode' in exclude ? exclude : undefined;
  const excluded = 'toOperationNode' in exclude ? undefined : [...exclude];
  return {
    ctes: sql`
    claim_limit AS (SELECT GREATEST(0, ${claim.limit}::int - ${fewer}) AS n),
    picked AS (
      SELECT picked_id FROM saffron_claimable_tasks(${now}::timestamptz,
        (SELECT n FROM claim_limit), ${regions}::text[],
        ${excludeSql ?? sql`${excluded}::uuid[]`}) AS picked_id),
    claimed AS (
      UPDATE tasks SET status = 'CLAIMED', worker_id = ${claim.workerId},
        claimed_at = ${now}::timestamptz, lease_expires_at = ${lease}::timestamptz,
        attempts = attempts + 1
      FROM workflow_executions AS w
      WHERE tasks.id = ANY(ARRAY(SELECT picked_id FROM picked)) AND w.id = tasks.workflow_id
      RETURNING ${claimedColumns('tasks')}, ${claimedWorkflowColumns('w')})`,
    parameters: [
      claim.limit,
      now,
      regions,
      ...(excluded ? [excluded] : []),
      claim.workerId,
      now,
      lease,
    ],
  };
}

/** The claim of up to `claim.limit` due or expired tasks. */
export function claimTasksPostgres(h: StoreHandle, claim: TaskClaim): ClaimStatement {
  const { ctes, parameters } = claimCtes(h, claim);
  return { query: sql<ClaimedRow>`WITH ${ctes} SELECT * FROM claimed`, parameters };
}
