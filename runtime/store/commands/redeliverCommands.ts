/**
 * Resume after a reconnect: commands DELIVERED to `deviceId` but not acked (the old
 * connection may have dropped them) are delivered again — `delivered_at` restarts the ack
 * timeout and the redelivery counts as a retry — or, when their retries are used up,
 * FAILED. Oldest first, at most `limit` per call; `exclude` names the ones this session
 * already redelivered, so a resume done in several rounds takes each command once. Expired
 * commands are left to the expiry sweep. One statement (FOR UPDATE SKIP LOCKED) and the
 * audit rows, in one transaction. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../errors.js';
import type { Store } from '../store.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import {
  byCreation,
  COMMAND_COLUMNS,
  MAX_RETRIES_ERROR,
  rowToCommand,
  type CommandActor,
  type CommandRecord,
  type CommandRow,
} from './command.js';

/**
 * Redeliver `deviceId`'s unacked commands; returns every command changed, oldest first —
 * status DELIVERED (push it again) or FAILED (retries used up).
 */
export async function redeliverCommands(
  store: Store,
  deviceId: string,
  options: { limit: number; exclude: readonly string[]; actor: CommandActor },
  now: Date,
): Promise<CommandRecord[]> {
  try {
    return await store.transaction(async (tx) => {
      const at = tx.codec.time(now);
      const excluded =
        options.exclude.length > 0
          ? sql`AND command_id NOT IN (${sql.join(options.exclude.map((id) => sql`${id}`))})`
          : sql``;
      // SET expressions read the row as it was, so each CASE sees the old retry_count
      const result = await sql<CommandRow>`
        UPDATE device_commands SET
          status = CASE WHEN retry_count < max_retries THEN 'DELIVERED' ELSE 'FAILED' END,
          retry_count = CASE WHEN retry_count < max_retries THEN retry_count + 1 ELSE retry_count END,
          delivered_at = CASE WHEN retry_count < max_retries THEN ${at}::timestamptz ELSE delivered_at END,
          error = CASE WHEN retry_count < max_retries THEN error ELSE ${MAX_RETRIES_ERROR} END
        WHERE command_id IN (
          SELECT command_id FROM device_commands
          WHERE device_id = ${deviceId} AND status = 'DELIVERED'
            AND (expires_at IS NULL OR expires_at > ${at}::timestamptz) ${excluded}
          ORDER BY created_at, command_id
          LIMIT ${options.limit}
          FOR UPDATE SKIP LOCKED)
        RETURNING ${sql.join(COMMAND_COLUMNS.map((c) => sql.ref(c)))}`.execute(tx.db);
      const commands = result.rows.map((row) => rowToCommand(tx.codec, row)).sort(byCreation);
      await appendCommandAudit(
        tx,
        options.actor,
        commands.map((c) =>
          c.status === 'DELIVERED'
            ? {
                event: 'COMMAND_DELIVERED' as const,
                deviceId,
                commandId: c.commandId,
                details: { via: 'websocket', retry_count: c.retryCount, redelivery: 'reconnect' },
              }
            : {
                event: 'COMMAND_FAILED' as const,
                deviceId,
                commandId: c.commandId,
                details: { reason: MAX_RETRIES_ERROR, retry_count: c.retryCount },
              },
        ),
        now,
      );
      return commands;
    });
  } catch (error) {
    throw translateDriverError(error, `redeliver commands to device ${deviceId}`);
  }
}
