import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** How a claimed task ended. */
export type TaskFinish =
  | { status: 'COMPLETED'; result: Record<string, unknown> }
  | { status: 'FAILED'; error: string }
  | { status: 'RETRY'; error: string; runAfter: Date };

/**
 * Record how a task ended, if `workerId` still holds it (a task whose lease expired and was
 * taken over is not finished twice). Returns false when the claim was lost.
 */
export async function finishTask(
  h: StoreHandle,
  taskId: string,
  workerId: string,
  finish: TaskFinish,
  now: Date,
): Promise<boolean> {
  const at = h.codec.time(now);
  const set =
    finish.status === 'COMPLETED'
      ? {
          status: 'COMPLETED',
          result: h.codec.json(finish.result),
          error: null,
          completed_at: at,
          lease_expires_at: null,
        }
      : finish.status === 'FAILED'
        ? { status: 'FAILED', error: finish.error, completed_at: at, lease_expires_at: null }
        : {
            status: 'PENDING',
            error: finish.error,
            run_after: h.codec.time(finish.runAfter),
            worker_id: null,
            claimed_at: null,
            lease_expires_at: null,
          };
  try {
    const r = await h.db
      .updateTable('tasks')
      .set(set)
      .where('id', '=', taskId)
      .where('status', '=', 'CLAIMED')
      .where('worker_id', '=', workerId)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  } catch (error) {
    throw translateDriverError(error, `finish task ${taskId}`);
  }
}
