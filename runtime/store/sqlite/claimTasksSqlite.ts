/**
 * SQLite task claim: one writer at a time, so a single UPDATE … WHERE id IN (SELECT … LIMIT)
 * is already atomic; no row locks needed.
 */
import { sql } from 'kysely';
import type { StoreHandle } from '../store.js';
import type { TaskClaim } from '../tasks/claimTasks.js';
import { regionFilter } from '../tasks/regionFilter.js';

/** Claim up to `claim.limit` due tasks; returns their ids. */
export async function claimTasksSqlite(h: StoreHandle, claim: TaskClaim): Promise<string[]> {
  const now = h.codec.time(claim.now);
  const lease = h.codec.time(new Date(claim.now.getTime() + claim.leaseMs));
  const region = regionFilter(claim);
  const result = await sql<{ id: string }>`
    UPDATE tasks SET status = 'CLAIMED', worker_id = ${claim.workerId}, claimed_at = ${now},
      lease_expires_at = ${lease}, attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM tasks WHERE status = 'PENDING' AND run_after <= ${now} ${region}
      ORDER BY run_after, created_at LIMIT ${claim.limit})
    RETURNING id`.execute(h.db);
  return result.rows.map((r) => r.id);
}
