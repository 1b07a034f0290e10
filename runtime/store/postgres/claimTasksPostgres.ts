/**
 * PostgreSQL task claim: the classic queue pattern — lock the oldest due rows with FOR UPDATE
 * SKIP LOCKED (concurrent workers never block on or double-claim a row) and mark them CLAIMED
 * with a lease, in one statement that returns the claimed rows. Tasks whose lease expired
 * come first: each candidate set is its own index scan (`status = 'CLAIMED'` is the few tasks
 * in flight; `status = 'PENDING'` is read in the index's `run_after` order and stops at the
 * limit), so no claim sorts the backlog. Tasks due at the same moment go in index order.
 * SKIP LOCKED also keeps the takeover clear of a completion that holds its group's rows.
 * Each claimed task comes with its workflow row (as JSON), so completing it needs no read.
 *
 * The claim is a set of CTEs ending in `claimed`, so a completion can claim the next tasks in
 * its own statement (postgres/completeTasksPostgres.ts).
 */
import { sql, type RawBuilder } from 'kysely';
import type { StoreHandle } from '../store.js';
import type { ClaimStatement, TaskClaim } from '../tasks/claimTasks.js';
import { type ClaimedRow, claimedColumns } from '../tasks/claimedTask.js';
import { regionFilter, regionParameters } from '../tasks/regionFilter.js';

/** Claim CTEs and their parameters, in the order they appear. */
export interface ClaimCtes {
  ctes: RawBuilder<unknown>;
  parameters: unknown[];
}

/**
 * CTEs that claim up to `claim.limit` tasks, less `fewer` (a parameterless SQL count) when
 * given, skipping the tasks `exclude` (a parameterless SQL condition on `id`) names; the
 * last, `claimed`, returns the claimed rows.
 */
export function claimCtes(
  h: StoreHandle,
  claim: TaskClaim,
  fewer: RawBuilder<unknown> = sql`0`,
  exclude: RawBuilder<unknown> = sql``,
): ClaimCtes {
  const now = h.codec.time(claim.now);
  const lease = h.codec.time(new Date(claim.now.getTime() + claim.leaseMs));
  const region = regionFilter(claim);
  const regions = regionParameters(claim);
  return {
    ctes: sql`
    claim_limit AS (SELECT GREATEST(0, ${claim.limit}::int - ${fewer}) AS n),
    expired AS (
      SELECT id FROM tasks
      WHERE status = 'CLAIMED' AND lease_expires_at <= ${now}::timestamptz ${region} ${exclude}
      ORDER BY lease_expires_at
      LIMIT (SELECT n FROM claim_limit)
      FOR UPDATE SKIP LOCKED),
    due AS (
      SELECT id FROM tasks
      WHERE status = 'PENDING' AND run_after <= ${now}::timestamptz ${region} ${exclude}
      ORDER BY run_after
      LIMIT (SELECT n FROM claim_limit)
      FOR UPDATE SKIP LOCKED),
    picked AS (
      SELECT id AS picked_id FROM expired UNION ALL SELECT id FROM due
      LIMIT (SELECT n FROM claim_limit)),
    claimed AS (
      UPDATE tasks SET status = 'CLAIMED', worker_id = ${claim.workerId},
        claimed_at = ${now}::timestamptz, lease_expires_at = ${lease}::timestamptz,
        attempts = attempts + 1
      FROM picked JOIN workflow_executions AS w ON true
      WHERE tasks.id = picked_id AND w.id = tasks.workflow_id
      RETURNING ${claimedColumns('tasks')}, to_jsonb(w) AS workflow)`,
    parameters: [claim.limit, now, ...regions, now, ...regions, claim.workerId, now, lease],
  };
}

/** The claim of up to `claim.limit` due or expired tasks. */
export function claimTasksPostgres(h: StoreHandle, claim: TaskClaim): ClaimStatement {
  const { ctes, parameters } = claimCtes(h, claim);
  return { query: sql<ClaimedRow>`WITH ${ctes} SELECT * FROM claimed`, parameters };
}
