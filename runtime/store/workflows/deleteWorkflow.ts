import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** Delete a workflow; its audit, logs, metrics, heartbeat, tasks, compensations and timers cascade. */
export async function deleteWorkflow(h: StoreHandle, id: string): Promise<boolean> {
  try {
    const result = await h.db
      .deleteFrom('workflow_executions')
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows === 1n;
  } catch (error) {
    throw translateDriverError(error, `delete workflow ${id}`);
  }
}
