import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A heartbeat of the worker that owns a running workflow. */
export interface Heartbeat {
  workflowId: string;
  workerId: string;
  currentStep?: string | null;
  stepStartedAt?: Date | null;
  at?: Date;
}

/** Insert or refresh a workflow's heartbeat row. */
export async function beatHeartbeat(h: StoreHandle, beat: Heartbeat): Promise<void> {
  const at = h.codec.time(beat.at ?? new Date());
  const row = {
    workflow_id: beat.workflowId,
    worker_id: beat.workerId,
    last_heartbeat: at,
    current_step: beat.currentStep ?? null,
    step_started_at: beat.stepStartedAt ? h.codec.time(beat.stepStartedAt) : null,
  };
  try {
    await h.db
      .insertInto('workflow_heartbeats')
      .values(row)
      .onConflict((oc) =>
        oc.column('workflow_id').doUpdateSet({
          worker_id: row.worker_id,
          last_heartbeat: at,
          current_step: row.current_step,
          step_started_at: row.step_started_at,
        }),
      )
      .execute();
  } catch (error) {
    throw translateDriverError(error, `heartbeat of ${beat.workflowId}`);
  }
}
