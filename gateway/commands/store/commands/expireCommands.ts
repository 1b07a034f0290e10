/**
 * Fail commands whose `expires_at` has passed before they finished (PENDING or DELIVERED):
 * status FAILED, error `expired`, a COMMAND_EXPIRED audit row each. At most `limit` per
 * call, FOR UPDATE SKIP LOCKED, one transaction. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudStore } from '../../../../runtime/index.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import { EXPIRED_ERROR, type CommandActor } from './command.js';

/** A command that expired. */
export interface ExpiredCommand {
  commandId: string;
  deviceId: string;
  previousStatus: string;
}

/** Expire what is due at `now`; returns the commands expired. */
export async function expireCommands(
  store: CloudStore,
  actor: CommandActor,
  now: Date,
  limit = 1000,
): Promise<ExpiredCommand[]> {
  try {
    return await store.transaction(async (tx) => {
      const at = tx.codec.time(now);
      const result = await sql<{ command_id: string; device_id: string; previous: string }>`
        WITH due AS (
          SELECT command_id, status AS previous FROM device_commands
          WHERE status IN ('PENDING', 'DELIVERED') AND expires_at <= ${at}::timestamptz
          ORDER BY expires_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        UPDATE device_commands AS c SET status = 'FAILED', error = ${EXPIRED_ERROR}
        FROM due WHERE c.command_id = due.command_id
        RETURNING c.command_id, c.device_id, due.previous`.execute(tx.db);
      const expired = result.rows.map((r) => ({
        commandId: r.command_id,
        deviceId: r.device_id,
        previousStatus: r.previous,
      }));
      await appendCommandAudit(
        tx,
        actor,
        expired.map((e) => ({
          event: 'COMMAND_EXPIRED',
          deviceId: e.deviceId,
          commandId: e.commandId,
          details: { previous_status: e.previousStatus },
        })),
        now,
      );
      return expired;
    });
  } catch (error) {
    throw translateDriverError(error, 'expire commands');
  }
}
