/**
 * PostgreSQL: apply many version-checked workflow updates in one statement (UPDATE … FROM
 * VALUES … RETURNING id). A batch of step commits from concurrent workflows then costs one
 * round trip for its workflow rows instead of one per workflow.
 *
 * The rows are also named by `id = ANY(ids)`, which the planner answers from the primary key.
 * Joined with the VALUES list alone, statistics taken while `workflow_executions` was nearly
 * empty (a new deployment, a burst of starts faster than autovacuum analyzes) made it hash
 * the list and read the whole table on every step commit while the table held a few thousand
 * rows (test/store/updateWorkflows.test.ts: 3,000; by 12,000 the planner's own scaling of the
 * old statistics chose the index again).
 */
import { type RawBuilder, sql } from 'kysely';
import type { StoreHandle } from '../store.js';
import type { WorkflowRowUpdate } from '../workflows/updateWorkflows.js';

/** The statement of {@link updateWorkflowsBatchPostgres}. */
export function updateWorkflowsBatchStatement(
  h: StoreHandle,
  updates: readonly WorkflowRowUpdate[],
  now: Date,
): RawBuilder<{ id: string }> {
  const at = h.codec.time(now);
  const rows = updates.map(
    (u) =>
      sql`(${u.id}::uuid, ${u.expectedVersion}::int, ${u.status}::varchar, ${u.currentStepIndex}::int, ${u.currentStep}::varchar, ${h.codec.json(u.state)}::jsonb, ${h.codec.json(u.actorSnapshot)}::jsonb)`,
  );
  return sql<{ id: string }>`
    UPDATE workflow_executions AS w
    SET status = v.status, current_step_index = v.idx, current_step = v.step, state = v.state,
        actor_snapshot = v.snap, version = v.expected + 1, updated_at = ${at}::timestamptz
    FROM (VALUES ${sql.join(rows)}) AS v(id, expected, status, idx, step, state, snap)
    WHERE w.id = ANY(${updates.map((u) => u.id)}::uuid[]) AND w.id = v.id
      AND w.version = v.expected
    RETURNING w.id`;
}

/** Apply `updates`; returns the ids whose row was at the expected version (and is now updated). */
export async function updateWorkflowsBatchPostgres(
  h: StoreHandle,
  updates: readonly WorkflowRowUpdate[],
  now: Date,
): Promise<Set<string>> {
  const result = await updateWorkflowsBatchStatement(h, updates, now).execute(h.db);
  return new Set(result.rows.map((r) => r.id));
}
