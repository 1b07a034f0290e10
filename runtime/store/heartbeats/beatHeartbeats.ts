import { executeCached, executeCachedRows } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import type { Heartbeat } from './beatHeartbeat.js';

/** Insert or refresh many heartbeats in one statement. */
export async function beatHeartbeats(h: StoreHandle, beats: readonly Heartbeat[]): Promise<void> {
  if (beats.length === 0) return;
  const rows = beats.map((b) => ({
    workflow_id: b.workflowId,
    worker_id: b.workerId,
    last_heartbeat: h.codec.time(b.at ?? new Date()),
    current_step: b.currentStep ?? null,
    step_started_at: b.stepStartedAt ? h.codec.time(b.stepStartedAt) : null,
  }));
  try {
    await executeCachedRows(h, 'beatHeartbeats', rows, () =>
      h.db
        .insertInto('workflow_heartbeats')
        .values(rows)
        .onConflict((oc) =>
          oc.column('workflow_id').doUpdateSet((eb) => ({
            worker_id: eb.ref('excluded.worker_id'),
            last_heartbeat: eb.ref('excluded.last_heartbeat'),
            current_step: eb.ref('excluded.current_step'),
            step_started_at: eb.ref('excluded.step_started_at'),
          })),
        ),
    );
  } catch (error) {
    throw translateDriverError(error, 'heartbeats');
  }
}

/** Remove the heartbeats of workflows that no longer run. */
export async function deleteHeartbeats(
  h: StoreHandle,
  workflowIds: readonly string[],
): Promise<void> {
  if (workflowIds.length === 0) return;
  try {
    if (workflowIds.length === 1)
      await executeCached(h, 'deleteHeartbeat', workflowIds, () =>
        h.db.deleteFrom('workflow_heartbeats').where('workflow_id', '=', workflowIds[0]!),
      );
    else
      await h.db
        .deleteFrom('workflow_heartbeats')
        .where('workflow_id', 'in', workflowIds)
        .execute();
  } catch (error) {
    throw translateDriverError(error, 'delete heartbeats');
  }
}
