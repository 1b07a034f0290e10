import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { BATCH_COLUMNS, rowToBatch, type BatchRecord } from './batch.js';

/**
 * Lock the batch row for this transaction (FOR UPDATE) — the one-writer rule of a batch
 * actor: whichever gateway holds the lock applies the next events. With `skipLocked` a row
 * another transaction holds is not waited for: undefined, as for a missing batch.
 */
export async function lockBatch(
  h: CloudHandle,
  batchId: string,
  options: { skipLocked?: boolean } = {},
): Promise<BatchRecord | undefined> {
  try {
    let query = h.cloud
      .selectFrom('command_batches')
      .select(BATCH_COLUMNS)
      .where('batch_id', '=', batchId)
      .forUpdate();
    if (options.skipLocked) query = query.skipLocked();
    const row = await query.executeTakeFirst();
    return row ? rowToBatch(h.codec, row) : undefined;
  } catch (error) {
    throw translateDriverError(error, `lock batch ${batchId}`);
  }
}
