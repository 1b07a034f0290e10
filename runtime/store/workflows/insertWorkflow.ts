import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { type NewWorkflow, workflowToRow } from './record.js';

/** Insert a new workflow at version 0. A duplicate id or idempotency key is a ConflictError. */
export async function insertWorkflow(
  h: StoreHandle,
  workflow: NewWorkflow,
  now = new Date(),
): Promise<void> {
  try {
    const row = workflowToRow(h.codec, workflow, 0, now);
    await executeCached(h, 'insertWorkflow', Object.values(row), () =>
      h.db.insertInto('workflow_executions').values(row),
    );
  } catch (error) {
    throw translateDriverError(error, `insert workflow ${workflow.id}`);
  }
}
