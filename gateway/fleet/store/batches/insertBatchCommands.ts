/**
 * Create the device_commands rows a batch actor released: PENDING, linked by `batch_id`,
 * `batch_sequence` = the command's position in the batch, with their COMMAND_CREATED audit
 * rows. Ids come from the actor's snapshot, so repeating a release is a no-op (ON CONFLICT
 * DO NOTHING). A device deleted since the batch was created gets no row: it is reported in
 * `missing` and the actor fails that item. Call inside the transaction that saves the
 * snapshot. Cloud tier only.
 */
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';

/** One released command. */
export interface NewBatchCommand {
  commandId: string;
  deviceId: string;
  commandType: string;
  payload: unknown;
  maxRetries: number;
  expiresAt: Date | null;
  sequence: number;
  /** The command version its payload was validated against (null: none registered). */
  commandVersion?: string | null;
}

/** What {@link insertBatchCommands} did. */
export interface BatchCommandsInserted {
  inserted: NewBatchCommand[];
  /** Commands whose device no longer exists. */
  missing: NewBatchCommand[];
}

const CHUNK = 400;

/** Insert `commands` of batch `batchId`, created by `createdBy`, audited as `actor`. */
export async function insertBatchCommands(
  h: CloudHandle,
  batchId: string,
  commands: readonly NewBatchCommand[],
  options: { createdBy: string | null; actor: CommandActor },
  now: Date,
): Promise<BatchCommandsInserted> {
  const inserted: NewBatchCommand[] = [];
  const missing: NewBatchCommand[] = [];
  try {
    const at = h.codec.time(now);
    for (let i = 0; i < commands.length; i += CHUNK) {
      const chunk = commands.slice(i, i + CHUNK);
      const ids = [...new Set(chunk.map((c) => c.deviceId))];
      const present = new Set(
        (
          await h.cloud
            .selectFrom('edge_devices')
            .select('device_id')
            .where('device_id', 'in', ids)
            .forShare()
            .execute()
        ).map((r) => r.device_id),
      );
      const rows = chunk.filter((c) => present.has(c.deviceId));
      missing.push(...chunk.filter((c) => !present.has(c.deviceId)));
      if (rows.length === 0) continue;
      const created = await h.cloud
        .insertInto('device_commands')
        .values(
          rows.map((c) => ({
            command_id: c.commandId,
            device_id: c.deviceId,
            command_type: c.commandType,
            payload: h.codec.json(c.payload),
            status: 'PENDING',
            max_retries: c.maxRetries,
            batch_id: batchId,
            batch_sequence: c.sequence,
            created_by: options.createdBy,
            expires_at: c.expiresAt ? h.codec.time(c.expiresAt) : null,
            command_version: c.commandVersion ?? null,
            created_at: at,
          })),
        )
        .onConflict((oc) => oc.column('command_id').doNothing())
        .returning('command_id')
        .execute();
      const fresh = new Set(created.map((r) => r.command_id));
      const done = rows.filter((c) => fresh.has(c.commandId));
      inserted.push(...done);
      await appendCommandAudit(
        h,
        options.actor,
        done.map((c) => ({
          event: 'COMMAND_CREATED',
          deviceId: c.deviceId,
          commandId: c.commandId,
          batchId,
          details: {
            command_type: c.commandType,
            max_retries: c.maxRetries,
            expires_at: c.expiresAt?.toISOString() ?? null,
            batch_sequence: c.sequence,
            ...(c.commandVersion ? { command_version: c.commandVersion } : {}),
          },
        })),
        now,
      );
    }
    return { inserted, missing };
  } catch (error) {
    throw translateDriverError(error, `create ${commands.length} command(s) of batch ${batchId}`);
  }
}
