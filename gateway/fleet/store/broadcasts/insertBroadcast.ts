import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { BROADCAST_COLUMNS, rowToBroadcast, type BroadcastRecord } from './broadcast.js';

/** A broadcast to create (PENDING; its phase driver starts it). */
export interface NewBroadcast {
  broadcastId: string;
  commandType: string;
  payload: unknown;
  /** The target filter, as the API shows it. */
  targetFilter: unknown;
  /** The rollout plan, as the API shows it. */
  rollout: unknown;
  failureThreshold: number | null;
  /** The initial actor snapshot. */
  actorSnapshot: unknown;
}

/**
 * Insert a PENDING broadcast with its BROADCAST_CREATED audit row. Call inside a
 * transaction (the two statements belong together).
 */
export async function insertBroadcast(
  h: CloudHandle,
  broadcast: NewBroadcast,
  actor: CommandActor,
  now: Date,
): Promise<BroadcastRecord> {
  try {
    const at = h.codec.time(now);
    const row = await h.cloud
      .insertInto('command_broadcasts')
      .values({
        broadcast_id: broadcast.broadcastId,
        command_type: broadcast.commandType,
        payload: h.codec.json(broadcast.payload),
        target_filter: h.codec.json(broadcast.targetFilter),
        rollout: h.codec.json(broadcast.rollout),
        status: 'PENDING',
        failure_threshold: broadcast.failureThreshold,
        actor_snapshot: h.codec.json(broadcast.actorSnapshot),
        created_by: actor.actor,
        created_at: at,
        updated_at: at,
      })
      .returning(BROADCAST_COLUMNS)
      .executeTakeFirstOrThrow();
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'BROADCAST_CREATED',
          broadcastId: broadcast.broadcastId,
          details: {
            command_type: broadcast.commandType,
            target_filter: broadcast.targetFilter,
            rollout: broadcast.rollout,
            failure_threshold: broadcast.failureThreshold,
          },
        },
      ],
      now,
    );
    return rowToBroadcast(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create broadcast ${broadcast.broadcastId}`);
  }
}
