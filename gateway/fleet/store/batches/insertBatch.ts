import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { BATCH_COLUMNS, rowToBatch, type BatchExecutionMode, type BatchRecord } from './batch.js';

/** A batch to create (PENDING; its actor starts it). */
export interface NewBatch {
  batchId: string;
  name: string | null;
  executionMode: BatchExecutionMode;
  totalCommands: number;
  /** The initial actor snapshot. */
  actorSnapshot: unknown;
}

/**
 * Insert a PENDING batch with its BATCH_CREATED audit row. Call inside a transaction (the
 * two statements belong together).
 */
export async function insertBatch(
  h: CloudHandle,
  batch: NewBatch,
  actor: CommandActor,
  now: Date,
): Promise<BatchRecord> {
  try {
    const at = h.codec.time(now);
    const row = await h.cloud
      .insertInto('command_batches')
      .values({
        batch_id: batch.batchId,
        name: batch.name,
        execution_mode: batch.executionMode,
        status: 'PENDING',
        total_commands: batch.totalCommands,
        actor_snapshot: h.codec.json(batch.actorSnapshot),
        created_by: actor.actor,
        created_at: at,
        updated_at: at,
      })
      .returning(BATCH_COLUMNS)
      .executeTakeFirstOrThrow();
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'BATCH_CREATED',
          batchId: batch.batchId,
          details: {
            name: batch.name,
            execution_mode: batch.executionMode,
            total_commands: batch.totalCommands,
          },
        },
      ],
      now,
    );
    return rowToBatch(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create batch ${batch.batchId}`);
  }
}
