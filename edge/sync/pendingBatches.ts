/**
 * The batches of an ordinary upload round: the PENDING queue, lowest sequence first. Each
 * batch is listed only once the one before has been answered and written down, so a record
 * the cloud just accepted is not listed again; a SYNC_TRANSACTIONS command with
 * `max_records` caps the round at that many records sent.
 */
import type { EdgeHandle } from '../../runtime/index.js';
import { listPendingRecords, type PendingRecord } from './listPendingRecords.js';

/** Where an upload round takes its batches from. */
export interface BatchSource {
  /** The next batch to send; empty when the round is done. */
  next(): Promise<PendingRecord[]>;
}

/** PENDING records in batches of `batchSize`, at most `maxRecords` in all. */
export function pendingBatches(
  h: EdgeHandle,
  batchSize: number,
  maxRecords = Number.POSITIVE_INFINITY,
): BatchSource {
  let left = maxRecords;
  return {
    async next() {
      const size = Math.min(batchSize, left);
      if (size <= 0) return [];
      const batch = await listPendingRecords(h, size);
      left -= batch.length;
      return batch;
    },
  };
}
