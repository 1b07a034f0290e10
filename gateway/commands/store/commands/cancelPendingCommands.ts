/**
 * Cancel the undelivered commands of a batch or broadcast: PENDING → CANCELLED (error
 * `cancelled`), one COMMAND_CANCELLED audit row each. FOR UPDATE SKIP LOCKED: a command
 * whose delivery is committing at that moment is left to the delivery (waiting for it could
 * deadlock with a device's own delivery round, which locks that device's rows); like any
 * command a device already holds (DELIVERED) it runs its course and is acked as usual. Call
 * inside a transaction. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import type { CommandActor } from './command.js';

/** Error text of a cancelled command. */
export const CANCELLED_ERROR = 'cancelled';

/** Whose commands to cancel. */
export type CancelScope = { batchId: string } | { broadcastId: string };

/** A cancelled command. */
export interface CancelledCommand {
  commandId: string;
  deviceId: string;
}

const AUDIT_CHUNK = 500;

/** Cancel the PENDING commands of `scope`; `reason` goes into the audit rows. */
export async function cancelPendingCommands(
  h: CloudHandle,
  scope: CancelScope,
  actor: CommandActor,
  reason: string,
  now: Date,
): Promise<CancelledCommand[]> {
  const column = 'batchId' in scope ? sql.ref('batch_id') : sql.ref('broadcast_id');
  const id = 'batchId' in scope ? scope.batchId : scope.broadcastId;
  try {
    const result = await sql<{ command_id: string; device_id: string }>`
      UPDATE device_commands SET status = 'CANCELLED', error = ${CANCELLED_ERROR}
      WHERE command_id IN (
        SELECT command_id FROM device_commands
        WHERE ${column} = ${id} AND status = 'PENDING'
        FOR UPDATE SKIP LOCKED)
      RETURNING command_id, device_id`.execute(h.db);
    const cancelled = result.rows.map((r) => ({ commandId: r.command_id, deviceId: r.device_id }));
    for (let i = 0; i < cancelled.length; i += AUDIT_CHUNK)
      await appendCommandAudit(
        h,
        actor,
        cancelled.slice(i, i + AUDIT_CHUNK).map((c) => ({
          event: 'COMMAND_CANCELLED',
          deviceId: c.deviceId,
          commandId: c.commandId,
          ...scope,
          details: { previous_status: 'PENDING', reason },
        })),
        now,
      );
    return cancelled;
  } catch (error) {
    throw translateDriverError(
      error,
      `cancel pending commands of ${'batchId' in scope ? 'batch' : 'broadcast'} ${id}`,
    );
  }
}
