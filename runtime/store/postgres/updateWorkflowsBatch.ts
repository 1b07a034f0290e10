/**
 * PostgreSQL: apply many version-checked workflow updates in one statement (UPDATE … FROM
 * VALUES … RETURNING id). A batch of step commits from concurrent workflows then costs one
 * round trip for its workflow rows instead of one per workflow.
 */
import { sql } from 'kysely';
import type { StoreHandle } from '../store.js';
import type { WorkflowRowUpdate } from '../workflows/updateWorkflows.js';

/** Apply `updates`; returns the ids whose row was at the expected version (and is now updated). */
export async function updateWorkflowsBatchPostgres(
  h: StoreHandle,
  updates: readonly WorkflowRowUpdate[],
  now: Date,
): Promise<Set<string>> {
  const at = h.codec.time(now);
  const rows = updates.map(
    (u) =>
      sql`(${u.id}::uuid, ${u.expectedVersion}::int, ${u.status}::varchar, ${u.currentStepIndex}::int, ${u.currentStep}::varchar, ${h.codec.json(u.state)}::jsonb, ${h.codec.json(u.actorSnapshot)}::jsonb)`,
  );
  const result = await sql<{ id: string }>`
    UPDATE workflow_executions AS w
    SET status = v.status, current_step_index = v.idx, current_step = v.step, state = v.state,
        actor_snapshot = v.snap, version = v.expected + 1, updated_at = ${at}::timestamptz
    FROM (VALUES ${sql.join(rows)}) AS v(id, expected, status, idx, step, state, snap)
    WHERE w.id = v.id AND w.version = v.expected
    RETURNING w.id`.execute(h.db);
  return new Set(result.rows.map((r) => r.id));
}
