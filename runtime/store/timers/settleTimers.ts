import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/**
 * Mark a workflow's pending timers FIRED (the work they waited for ran) or CANCELLED (the
 * workflow ended or was cancelled). Without `stepName`, every pending timer of the workflow.
 */
export async function settleTimers(
  h: StoreHandle,
  workflowId: string,
  status: 'FIRED' | 'CANCELLED',
  stepName?: string,
): Promise<void> {
  try {
    let query = h.db
      .updateTable('workflow_timers')
      .set({ status })
      .where('workflow_id', '=', workflowId)
      .where('status', '=', 'PENDING');
    if (stepName !== undefined) query = query.where('step_name', '=', stepName);
    await query.execute();
  } catch (error) {
    throw translateDriverError(error, 'settle timers');
  }
}
