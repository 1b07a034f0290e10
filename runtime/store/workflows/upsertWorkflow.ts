import { sql } from 'kysely';
import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { type NewWorkflow, workflowToRow } from './record.js';

/**
 * Insert a workflow or overwrite its mutable columns (status, step, state, snapshots,
 * metadata), bumping its version: one statement, for sync and for snapshots written without
 * a version check. Engine writes that must not race use {@link updateWorkflow}.
 */
export async function upsertWorkflow(
  h: StoreHandle,
  workflow: NewWorkflow,
  now = new Date(),
): Promise<void> {
  const row = workflowToRow(h.codec, workflow, 0, now);
  try {
    await executeCached(h, 'upsertWorkflow', Object.values(row), () =>
      h.db
        .insertInto('workflow_executions')
        .values(row)
        .onConflict((oc) =>
          // naming the constraint spares PostgreSQL the arbiter-index inference on every call
          (h.dialect === 'sqlite'
            ? oc.column('id')
            : oc.constraint('workflow_executions_pkey')
          ).doUpdateSet((eb) => ({
            status: eb.ref('excluded.status'),
            current_step_index: eb.ref('excluded.current_step_index'),
            current_step: eb.ref('excluded.current_step'),
            state: eb.ref('excluded.state'),
            actor_snapshot: eb.ref('excluded.actor_snapshot'),
            metadata: eb.ref('excluded.metadata'),
            updated_at: eb.ref('excluded.updated_at'),
            version: eb(eb.ref('workflow_executions.version'), '+', sql.lit(1)),
          })),
        ),
    );
  } catch (error) {
    throw translateDriverError(error, `upsert workflow ${workflow.id}`);
  }
}
