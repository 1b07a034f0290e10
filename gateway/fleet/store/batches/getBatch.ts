import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { BATCH_COLUMNS, rowToBatch, type BatchRecord } from './batch.js';

/** The batch `batchId`, or undefined. */
export async function getBatch(h: CloudHandle, batchId: string): Promise<BatchRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('command_batches')
      .select(BATCH_COLUMNS)
      .where('batch_id', '=', batchId)
      .executeTakeFirst();
    return row ? rowToBatch(h.codec, row) : undefined;
  } catch (error) {
    throw translateDriverError(error, `get batch ${batchId}`);
  }
}
