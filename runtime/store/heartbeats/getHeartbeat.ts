import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import type { StaleHeartbeat } from './listStaleHeartbeats.js';

/** The heartbeat of a workflow — present while some node is driving it — or undefined. */
export async function getHeartbeat(
  h: StoreHandle,
  workflowId: string,
): Promise<StaleHeartbeat | undefined> {
  try {
    const r = await h.db
      .selectFrom('workflow_heartbeats')
      .select(['workflow_id', 'worker_id', 'last_heartbeat', 'current_step'])
      .where('workflow_id', '=', workflowId)
      .executeTakeFirst();
    return (
      r && {
        workflowId: r.workflow_id,
        workerId: r.worker_id,
        lastHeartbeat: h.codec.parseTime(r.last_heartbeat),
        currentStep: r.current_step,
      }
    );
  } catch (error) {
    throw translateDriverError(error, `read heartbeat of ${workflowId}`);
  }
}
