/**
 * PostgreSQL task claim: the classic queue pattern — lock the oldest due PENDING rows with
 * FOR UPDATE SKIP LOCKED (concurrent workers never block on or double-claim a row) and mark
 * them CLAIMED with a lease, in one statement.
 */
import { sql } from 'kysely';
import type { StoreHandle } from '../store.js';
import type { TaskClaim } from '../tasks/claimTasks.js';
import { regionFilter } from '../tasks/regionFilter.js';

/** Claim up to `claim.limit` due tasks; returns their ids. */
export async function claimTasksPostgres(h: StoreHandle, claim: TaskClaim): Promise<string[]> {
  const now = h.codec.time(claim.now);
  const lease = h.codec.time(new Date(claim.now.getTime() + claim.leaseMs));
  const region = regionFilter(claim);
  const result = await sql<{ id: string }>`
    UPDATE tasks SET status = 'CLAIMED', worker_id = ${claim.workerId}, claimed_at = ${now}::timestamptz,
      lease_expires_at = ${lease}::timestamptz, attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM tasks
      WHERE status = 'PENDING' AND run_after <= ${now}::timestamptz ${region}
      ORDER BY run_after, created_at
      LIMIT ${claim.limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING id`.execute(h.db);
  return result.rows.map((r) => r.id);
}
