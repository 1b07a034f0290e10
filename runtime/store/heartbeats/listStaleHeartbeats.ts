import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A heartbeat older than the zombie threshold. */
export interface StaleHeartbeat {
  workflowId: string;
  workerId: string;
  lastHeartbeat: Date;
  currentStep: string | null;
}

/** Heartbeats last refreshed before `olderThan`, oldest first (uses the ascending index). */
export async function listStaleHeartbeats(
  h: StoreHandle,
  olderThan: Date,
  limit = 100,
): Promise<StaleHeartbeat[]> {
  try {
    const rows = await h.db
      .selectFrom('workflow_heartbeats')
      .select(['workflow_id', 'worker_id', 'last_heartbeat', 'current_step'])
      .where('last_heartbeat', '<', h.codec.time(olderThan))
      .orderBy('last_heartbeat')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      workflowId: r.workflow_id,
      workerId: r.worker_id,
      lastHeartbeat: h.codec.parseTime(r.last_heartbeat),
      currentStep: r.current_step,
    }));
  } catch (error) {
    throw translateDriverError(error, 'list stale heartbeats');
  }
}
