/**
 * The next records to upload: PENDING, in sequence order, so the cloud sees a device's
 * sequence numbers arrive in order and its gap report means what it says.
 */
import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';

/** A queued record as it is uploaded. */
export interface PendingRecord {
  workflowId: string;
  sequence: number;
  /** The signed record, exactly as queued. */
  record: unknown;
}

/** A saf_pending_transactions row as uploaded. */
export function pendingRecordOf(
  h: EdgeHandle,
  row: { workflow_id: string; sequence_number: number | string; record: unknown },
): PendingRecord {
  return {
    workflowId: row.workflow_id,
    sequence: h.codec.parseInt(row.sequence_number),
    record: h.codec.parseJson(row.record),
  };
}

/** At most `limit` PENDING records, lowest sequence number first. */
export async function listPendingRecords(h: EdgeHandle, limit: number): Promise<PendingRecord[]> {
  try {
    const rows = await h.edge
      .selectFrom('saf_pending_transactions')
      .select(['workflow_id', 'sequence_number', 'record'])
      .where('status', '=', 'PENDING')
      .orderBy('sequence_number')
      .limit(limit)
      .execute();
    return rows.map((row) => pendingRecordOf(h, row));
  } catch (error) {
    throw translateDriverError(error, 'list pending SAF records');
  }
}
