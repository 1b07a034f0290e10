import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/**
 * Refresh the heartbeats this node still owns among `workflowIds` (one statement); returns
 * the ids refreshed. A row another node took over, or one removed because the workflow
 * stopped running, is left alone.
 */
export async function refreshHeartbeats(
  h: StoreHandle,
  workerId: string,
  workflowIds: readonly string[],
  at: Date,
): Promise<string[]> {
  if (workflowIds.length === 0) return [];
  try {
    const rows = await h.db
      .updateTable('workflow_heartbeats')
      .set({ last_heartbeat: h.codec.time(at) })
      .where('worker_id', '=', workerId)
      .where('workflow_id', 'in', workflowIds)
      .returning('workflow_id')
      .execute();
    return rows.map((r) => r.workflow_id);
  } catch (error) {
    throw translateDriverError(error, 'refresh heartbeats');
  }
}

/**
 * Take over a stale heartbeat: succeeds only if the row still names `previousWorker` and is
 * still older than `staleBefore` — a compare-and-set, so an owner that came back to life,
 * or another scanner, wins the race cleanly.
 */
export async function takeOverHeartbeat(
  h: StoreHandle,
  takeover: {
    workflowId: string;
    previousWorker: string;
    staleBefore: Date;
    workerId: string;
    at: Date;
  },
): Promise<boolean> {
  try {
    const result = await h.db
      .updateTable('workflow_heartbeats')
      .set({ worker_id: takeover.workerId, last_heartbeat: h.codec.time(takeover.at) })
      .where('workflow_id', '=', takeover.workflowId)
      .where('worker_id', '=', takeover.previousWorker)
      .where('last_heartbeat', '<', h.codec.time(takeover.staleBefore))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  } catch (error) {
    throw translateDriverError(error, `take over heartbeat of ${takeover.workflowId}`);
  }
}
