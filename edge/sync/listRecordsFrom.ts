/**
 * The records a resend walks (SYNC_TRANSACTIONS with `since_sequence`): every record the
 * device still holds from a sequence number on, whatever its status, lowest first. Unlike
 * {@link listPendingRecords} the status comes along: the caller skips REJECTED records and
 * counts them, so the ack can say how many of the range were not sent and why.
 */
import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';
import { pendingRecordOf, type PendingRecord } from './listPendingRecords.js';

/** A held record with its status (PENDING, SYNCED or REJECTED). */
export interface HeldRecord extends PendingRecord {
  status: string;
}

/** At most `limit` records with a sequence number ≥ `fromSequence`, lowest first. */
export async function listRecordsFrom(
  h: EdgeHandle,
  fromSequence: number,
  limit: number,
): Promise<HeldRecord[]> {
  try {
    const rows = await h.edge
      .selectFrom('saf_pending_transactions')
      .select(['workflow_id', 'sequence_number', 'record', 'status'])
      .where('sequence_number', '>=', fromSequence)
      .orderBy('sequence_number')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...pendingRecordOf(h, row), status: row.status }));
  } catch (error) {
    throw translateDriverError(error, 'list held SAF records');
  }
}
