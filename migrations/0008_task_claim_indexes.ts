/** Migration 0008_task_claim_indexes: one partial index per claimable task state, and the claim's candidate search as a function that always walks them in order. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0008_task_claim_indexes',
  description:
    'partial indexes for due (PENDING by run_after) and leased (CLAIMED by lease_expires_at) tasks replace the (status, run_after) index; saffron_claimable_tasks() finds claim candidates by walking them in order',
  statements: [
    `CREATE INDEX idx_tasks_pending_run_after ON tasks (run_after) WHERE status = 'PENDING'`,
    `CREATE INDEX idx_tasks_claimed_lease ON tasks (lease_expires_at) WHERE status = 'CLAIMED'`,
    `DROP INDEX idx_tasks_status_run_after`,
    // Bitmap scans are off inside: without fresh statistics (a backlog queued faster than
    // autovacuum analyzes) the planner would read and sort the whole backlog on every claim.
    // ROWS 10: a claim is a worker's free slots, so the caller joins by primary key.
    `CREATE FUNCTION saffron_claimable_tasks(p_now TIMESTAMPTZ, p_limit INTEGER, p_regions TEXT[], p_exclude UUID[])
RETURNS SETOF UUID LANGUAGE plpgsql VOLATILE ROWS 10 SET enable_bitmapscan = off AS $$
BEGIN
  RETURN QUERY
  WITH expired AS (
    SELECT t.id FROM tasks AS t
    WHERE t.status = 'CLAIMED' AND t.lease_expires_at <= p_now
      AND (p_regions IS NULL OR t.data_region IS NULL OR t.data_region = ANY (p_regions))
      AND t.id <> ALL (p_exclude)
    ORDER BY t.lease_expires_at
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
  ), due AS (
    SELECT t.id FROM tasks AS t
    WHERE t.status = 'PENDING' AND t.run_after <= p_now
      AND (p_regions IS NULL OR t.data_region IS NULL OR t.data_region = ANY (p_regions))
      AND t.id <> ALL (p_exclude)
    ORDER BY t.run_after
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
  )
  SELECT e.id FROM expired AS e UNION ALL SELECT d.id FROM due AS d
  LIMIT p_limit;
END
$$`,
  ],
};
