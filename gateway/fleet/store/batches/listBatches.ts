import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { BATCH_COLUMNS, rowToBatch, type BatchRecord } from './batch.js';

/** Filters and paging of {@link listBatches}. */
export interface BatchFilter {
  status?: string;
  /** Page size (default 50, at most 500). */
  limit?: number;
  /** Keyset paging: batches created before this one (newest first). */
  before?: { createdAt: Date; batchId: string };
}

/** Batches, newest first. */
export async function listBatches(
  h: CloudHandle,
  filter: BatchFilter = {},
): Promise<BatchRecord[]> {
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
  let query = h.cloud.selectFrom('command_batches').select(BATCH_COLUMNS);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.before) {
    const at = h.codec.time(filter.before.createdAt);
    const id = filter.before.batchId;
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', at),
        eb.and([eb('created_at', '=', at), eb('batch_id', '<', id)]),
      ]),
    );
  }
  try {
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('batch_id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => rowToBatch(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list batches');
  }
}

/** Ids of batches not yet finished (PENDING or IN_PROGRESS), oldest first, at most `limit`. */
export async function listActiveBatchIds(h: CloudHandle, limit = 500): Promise<string[]> {
  try {
    const rows = await h.cloud
      .selectFrom('command_batches')
      .select('batch_id')
      .where('status', 'in', ['PENDING', 'IN_PROGRESS'])
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.batch_id);
  } catch (error) {
    throw translateDriverError(error, 'list active batches');
  }
}
