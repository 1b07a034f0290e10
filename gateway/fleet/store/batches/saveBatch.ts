import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** A batch's new projection of its actor. */
export interface BatchChanges {
  status: string;
  completedCount: number;
  failedCount: number;
  actorSnapshot: unknown;
  /** Set when the batch reached a terminal status. */
  completedAt: Date | null;
}

/** Write a batch's status, counts and snapshot (the row is locked by the caller). */
export async function saveBatch(
  h: CloudHandle,
  batchId: string,
  changes: BatchChanges,
  now: Date,
): Promise<void> {
  try {
    await h.cloud
      .updateTable('command_batches')
      .set({
        status: changes.status,
        completed_count: changes.completedCount,
        failed_count: changes.failedCount,
        actor_snapshot: h.codec.json(changes.actorSnapshot),
        completed_at: changes.completedAt ? h.codec.time(changes.completedAt) : null,
        updated_at: h.codec.time(now),
      })
      .where('batch_id', '=', batchId)
      .execute();
  } catch (error) {
    throw translateDriverError(error, `save batch ${batchId}`);
  }
}
