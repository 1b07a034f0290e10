import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** Remove a workflow's heartbeat: it has no running owner any more (ended or waiting). */
export async function deleteHeartbeat(h: StoreHandle, workflowId: string): Promise<void> {
  try {
    await h.db.deleteFrom('workflow_heartbeats').where('workflow_id', '=', workflowId).execute();
  } catch (error) {
    throw translateDriverError(error, `delete heartbeat of ${workflowId}`);
  }
}
