import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A durable timer. */
export interface NewTimer {
  id: string;
  workflowId: string;
  kind: string;
  stepName?: string | null;
  dueAt: Date;
  payload?: Record<string, unknown>;
}

/** Record a timer that is due at `dueAt`. */
export async function insertTimer(h: StoreHandle, timer: NewTimer): Promise<void> {
  try {
    await h.db
      .insertInto('workflow_timers')
      .values({
        id: timer.id,
        workflow_id: timer.workflowId,
        timer_kind: timer.kind,
        step_name: timer.stepName ?? null,
        due_at: h.codec.time(timer.dueAt),
        payload: h.codec.json(timer.payload ?? {}),
      })
      .execute();
  } catch (error) {
    throw translateDriverError(error, 'insert timer');
  }
}
