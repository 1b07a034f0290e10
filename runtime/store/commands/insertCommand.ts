import { translateDriverError } from '../errors.js';
import { notifyCommands } from '../postgres/commandNotifications.js';
import type { Store, StoreHandle } from '../store.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import { COMMAND_COLUMNS, rowToCommand, type CommandActor, type CommandRecord } from './command.js';

/** A command to create. */
export interface NewCommand {
  commandId: string;
  deviceId: string;
  commandType: string;
  payload: unknown;
  maxRetries: number;
  expiresAt: Date | null;
  /** The command version whose payload schema the payload was checked against, if any. */
  commandVersion?: string | null;
}

/**
 * Create a PENDING command with its COMMAND_CREATED audit row, and notify the gateways
 * (`origin` names the one creating it), in one transaction. Undefined when the device does
 * not exist.
 */
export async function insertCommand(
  store: Store,
  command: NewCommand,
  actor: CommandActor,
  origin: string,
  now: Date,
): Promise<CommandRecord | undefined> {
  try {
    return await store.transaction((tx) => insertCommandWith(tx, command, actor, origin, now));
  } catch (error) {
    throw translateDriverError(error, `create command for device ${command.deviceId}`);
  }
}

/**
 * {@link insertCommand} inside the caller's transaction (a command released by its approval
 * commits with the approval's decision). Undefined when the device does not exist.
 */
export async function insertCommandWith(
  tx: StoreHandle,
  command: NewCommand,
  actor: CommandActor,
  origin: string,
  now: Date,
): Promise<CommandRecord | undefined> {
  try {
    const device = await tx.db
      .selectFrom('edge_devices')
      .select('device_id')
      .where('device_id', '=', command.deviceId)
      .forShare()
      .executeTakeFirst();
    if (!device) return undefined;
    const row = await tx.db
      .insertInto('device_commands')
      .values({
        command_id: command.commandId,
        device_id: command.deviceId,
        command_type: command.commandType,
        payload: tx.codec.json(command.payload),
        status: 'PENDING',
        max_retries: command.maxRetries,
        command_version: command.commandVersion ?? null,
        created_by: actor.actor,
        expires_at: command.expiresAt ? tx.codec.time(command.expiresAt) : null,
        created_at: tx.codec.time(now),
      })
      .returning(COMMAND_COLUMNS)
      .executeTakeFirstOrThrow();
    await appendCommandAudit(
      tx,
      actor,
      [
        {
          event: 'COMMAND_CREATED',
          deviceId: command.deviceId,
          commandId: command.commandId,
          details: {
            command_type: command.commandType,
            max_retries: command.maxRetries,
            expires_at: command.expiresAt?.toISOString() ?? null,
            ...(command.commandVersion ? { command_version: command.commandVersion } : {}),
          },
        },
      ],
      now,
    );
    await notifyCommands(tx, [command.deviceId], origin);
    return rowToCommand(tx.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create command for device ${command.deviceId}`);
  }
}
