/**
 * SQLite task claim: one writer at a time, so a single UPDATE … WHERE id IN (SELECT … LIMIT)
 * is already atomic; no row locks needed. Due PENDING tasks and tasks whose lease expired
 * are claimed alike, and the statement returns the claimed rows.
 */
import { sql } from 'kysely';
import type { StoreHandle } from '../store.js';
import type { ClaimStatement, TaskClaim } from '../tasks/claimTasks.js';
import { type ClaimedRow, claimedColumns } from '../tasks/claimedTask.js';
import { regionFilter, regionParameters } from '../tasks/regionFilter.js';

/** The claim of up to `claim.limit` due or expired tasks. */
export function claimTasksSqlite(h: StoreHandle, claim: TaskClaim): ClaimStatement {
  const now = h.codec.time(claim.now);
  const lease = h.codec.time(new Date(claim.now.getTime() + claim.leaseMs));
  return {
    query: sql<ClaimedRow>`
    UPDATE tasks SET status = 'CLAIMED', worker_id = ${claim.workerId}, claimed_at = ${now},
      lease_expires_at = ${lease}, attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM tasks
      WHERE ((status = 'PENDING' AND run_after <= ${now}) OR (status = 'CLAIMED' AND lease_expires_at <= ${now}))
        ${regionFilter(claim)}
      ORDER BY run_after, created_at LIMIT ${claim.limit})
    RETURNING ${claimedColumns()}`,
    parameters: [claim.workerId, now, lease, now, now, ...regionParameters(claim), claim.limit],
  };
}
