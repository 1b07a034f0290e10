import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { rowToWorkflow, type WorkflowRecord } from './record.js';

/** The workflow with `id`, or undefined. */
export async function getWorkflow(h: StoreHandle, id: string): Promise<WorkflowRecord | undefined> {
  try {
    const [row] = (
      await executeCached(h, 'getWorkflow', [id], () =>
        h.db.selectFrom('workflow_executions').selectAll().where('id', '=', id),
      )
    ).rows;
    return row && rowToWorkflow(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `get workflow ${id}`);
  }
}

/** The workflow started with `idempotencyKey`, or undefined. */
export async function getWorkflowByIdempotencyKey(
  h: StoreHandle,
  idempotencyKey: string,
): Promise<WorkflowRecord | undefined> {
  try {
    const row = await h.db
      .selectFrom('workflow_executions')
      .selectAll()
      .where('idempotency_key', '=', idempotencyKey)
      .executeTakeFirst();
    return row && rowToWorkflow(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, 'get workflow by idempotency key');
  }
}
