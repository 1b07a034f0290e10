/**
 * Hand a device its due commands: PENDING, due (`next_attempt_at` passed or unset), not
 * expired — oldest first, marked DELIVERED with `delivered_at`, in one statement with
 * FOR UPDATE SKIP LOCKED so two gateways (or a push and a poll) never hand out one command
 * twice, and audited in the same transaction. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../errors.js';
import type { Store } from '../store.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import {
  byCreation,
  COMMAND_COLUMNS,
  rowToCommand,
  type CommandActor,
  type CommandRecord,
  type CommandRow,
} from './command.js';

/** How a command reaches the device (recorded in the audit row). */
export type DeliveryChannel = 'websocket' | 'poll';

/** Mark up to `limit` due commands of `deviceId` DELIVERED and return them, oldest first. */
export async function deliverCommands(
  store: Store,
  deviceId: string,
  options: { limit: number; via: DeliveryChannel; actor: CommandActor },
  now: Date,
): Promise<CommandRecord[]> {
  try {
    return await store.transaction(async (tx) => {
      const at = tx.codec.time(now);
      const result = await sql<CommandRow>`
        UPDATE device_commands SET status = 'DELIVERED', delivered_at = ${at}::timestamptz
        WHERE command_id IN (
          SELECT command_id FROM device_commands
          WHERE device_id = ${deviceId} AND status = 'PENDING'
            AND (next_attempt_at IS NULL OR next_attempt_at <= ${at}::timestamptz)
            AND (expires_at IS NULL OR expires_at > ${at}::timestamptz)
          ORDER BY created_at, command_id
          LIMIT ${options.limit}
          FOR UPDATE SKIP LOCKED)
        RETURNING ${sql.join(COMMAND_COLUMNS.map((c) => sql.ref(c)))}`.execute(tx.db);
      const commands = result.rows.map((row) => rowToCommand(tx.codec, row)).sort(byCreation);
      await appendCommandAudit(
        tx,
        options.actor,
        commands.map((c) => ({
          event: 'COMMAND_DELIVERED',
          deviceId,
          commandId: c.commandId,
          details: { via: options.via, retry_count: c.retryCount },
        })),
        now,
      );
      return commands;
    });
  } catch (error) {
    throw translateDriverError(error, `deliver commands to device ${deviceId}`);
  }
}
