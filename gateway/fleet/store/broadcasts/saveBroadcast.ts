import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** A broadcast's new projection of its actor and its commands. */
export interface BroadcastChanges {
  status: string;
  currentPhase: number;
  totalDevices: number;
  succeededCount: number;
  failedCount: number;
  actorSnapshot: unknown;
  /** Set when the broadcast reached a terminal status. */
  completedAt: Date | null;
}

/** Write a broadcast's status, phase, counts and snapshot (the row is locked by the caller). */
export async function saveBroadcast(
  h: CloudHandle,
  broadcastId: string,
  changes: BroadcastChanges,
  now: Date,
): Promise<void> {
  try {
    await h.cloud
      .updateTable('command_broadcasts')
      .set({
        status: changes.status,
        current_phase: changes.currentPhase,
        total_devices: changes.totalDevices,
        succeeded_count: changes.succeededCount,
        failed_count: changes.failedCount,
        actor_snapshot: h.codec.json(changes.actorSnapshot),
        completed_at: changes.completedAt ? h.codec.time(changes.completedAt) : null,
        updated_at: h.codec.time(now),
      })
      .where('broadcast_id', '=', broadcastId)
      .execute();
  } catch (error) {
    throw translateDriverError(error, `save broadcast ${broadcastId}`);
  }
}
