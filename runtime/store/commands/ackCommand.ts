/**
 * A device's acknowledgement of a command: EXECUTED or FAILED, with an optional result and
 * error. Idempotent: repeating the ack that finished a command changes nothing and reports
 * `repeated`; an ack that disagrees with how the command finished (another status, result
 * or error — including a command the gateway already failed for expiry or retries) is a
 * `conflict`. An ack for a command that went back to PENDING after an ack timeout counts:
 * the device did run it. Row-locked, audited in the same transaction. Cloud tier only.
 */
import { canonicalJson } from '../../definition/hash.js';
import { translateDriverError } from '../errors.js';
import type { Store } from '../store.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import { COMMAND_COLUMNS, rowToCommand, type CommandActor, type CommandRecord } from './command.js';

/** What a device reports. */
export interface CommandAck {
  deviceId: string;
  commandId: string;
  status: 'EXECUTED' | 'FAILED';
  result?: unknown;
  error?: string;
}

/** The outcome of an ack. */
export type AckOutcome =
  | { kind: 'acked'; command: CommandRecord }
  | { kind: 'repeated'; command: CommandRecord }
  | { kind: 'conflict'; command: CommandRecord }
  | { kind: 'not_found' };

/** Record `ack` (see the module comment). */
export async function ackCommand(
  store: Store,
  ack: CommandAck,
  actor: CommandActor,
  now: Date,
): Promise<AckOutcome> {
  try {
    return await store.transaction(async (tx): Promise<AckOutcome> => {
      const row = await tx.db
        .selectFrom('device_commands')
        .select(COMMAND_COLUMNS)
        .where('command_id', '=', ack.commandId)
        .forUpdate()
        .executeTakeFirst();
      // another device's command is as unknown as a missing one
      if (!row || row.device_id !== ack.deviceId) return { kind: 'not_found' };
      const current = rowToCommand(tx.codec, row);
      const result = ack.result === undefined ? null : ack.result;
      const error = ack.error ?? null;
      if (current.status !== 'PENDING' && current.status !== 'DELIVERED') {
        const same =
          current.status === ack.status &&
          current.error === error &&
          canonicalJson(current.result) === canonicalJson(result);
        return { kind: same ? 'repeated' : 'conflict', command: current };
      }
      const updated = await tx.db
        .updateTable('device_commands')
        .set({
          status: ack.status,
          result: result === null ? null : tx.codec.json(result),
          error,
          executed_at: tx.codec.time(now),
        })
        .where('command_id', '=', ack.commandId)
        .returning(COMMAND_COLUMNS)
        .executeTakeFirstOrThrow();
      await appendCommandAudit(
        tx,
        actor,
        [
          {
            event: ack.status === 'EXECUTED' ? 'COMMAND_EXECUTED' : 'COMMAND_FAILED',
            deviceId: ack.deviceId,
            commandId: ack.commandId,
            details: {
              previous_status: current.status,
              retry_count: current.retryCount,
              ...(error !== null ? { error } : {}),
            },
          },
        ],
        now,
      );
      return { kind: 'acked', command: rowToCommand(tx.codec, updated) };
    });
  } catch (error) {
    throw translateDriverError(error, `ack command ${ack.commandId}`);
  }
}
