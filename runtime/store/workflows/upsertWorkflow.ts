import { sql } from 'kysely';
import { executeCached } from '../cachedQuery.js';
import { ConflictError, translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { type NewWorkflow, workflowToRow } from './record.js';

/**
 * Insert a workflow, or overwrite its mutable columns (status, step, state, snapshot,
 * metadata) and bump its version when it exists — for sync and for snapshots written without
 * a version check; engine writes that must not race use {@link updateWorkflow}.
 *
 * Written as INSERT … ON CONFLICT DO NOTHING followed, only when the row exists, by an
 * UPDATE: the insert path (the common one: a record arriving for the first time) is then
 * as cheap to plan as a plain insert, which matters on PGlite where nothing caches plans.
 * A conflict on another unique key (the idempotency key) is a ConflictError.
 */
export async function upsertWorkflow(
  h: StoreHandle,
  workflow: NewWorkflow,
  now = new Date(),
): Promise<void> {
  const row = workflowToRow(h.codec, workflow, 0, now);
  try {
    const inserted = await executeCached(h, 'upsertWorkflow.insert', Object.values(row), () =>
      h.db
        .insertInto('workflow_executions')
        .values(row)
        .onConflict((oc) => oc.doNothing())
        .returning('id'),
    );
    if (inserted.rows.length === 1) return;
    const updated = await h.db
      .updateTable('workflow_executions')
      .set({
        status: row.status,
        current_step_index: row.current_step_index,
        current_step: row.current_step,
        state: row.state,
        actor_snapshot: row.actor_snapshot,
        metadata: row.metadata,
        updated_at: row.updated_at,
        version: sql`version + 1`,
      })
      .where('id', '=', row.id)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) {
      throw new ConflictError(
        `workflow ${workflow.id} collides with another workflow's unique key`,
        {
          details: { workflowId: workflow.id },
        },
      );
    }
  } catch (error) {
    throw translateDriverError(error, `upsert workflow ${workflow.id}`);
  }
}
