/**
 * Queueing a signed record in `saf_pending_transactions` (status PENDING). The whole signed
 * record is kept in `record`, so the uploader sends exactly the bytes' meaning that was
 * signed; the columns beside it (sequence, amount, currency) are for ordering and limits.
 */
import {
  executeCached,
  translateDriverError,
  type SafRecord,
  type EdgeHandle,
} from '../../runtime/index.js';

/** Insert `record` as PENDING, queued at `now`. */
export async function insertPendingRecord(
  h: EdgeHandle,
  record: SafRecord,
  now: Date,
): Promise<void> {
  const row = {
    workflow_id: record.workflow_id,
    device_id: record.device_id,
    sequence_number: record.device_sequence,
    idempotency_key: record.workflow_id,
    workflow_type: record.workflow_type,
    workflow_version: record.workflow_version ?? null,
    amount_minor: record.amount_minor ?? null,
    currency: record.currency ?? null,
    record: h.codec.json(record),
    signature: record.signature,
    status: 'PENDING',
    created_at: h.codec.time(now),
  };
  try {
    await executeCached(h, 'insertPendingRecord', Object.values(row), () =>
      h.edge.insertInto('saf_pending_transactions').values(row),
    );
  } catch (error) {
    throw translateDriverError(error, `queue the SAF record of workflow ${record.workflow_id}`);
  }
}

/** Whether workflow `workflowId` already has a queued record (of any status). */
export async function hasPendingRecord(h: EdgeHandle, workflowId: string): Promise<boolean> {
  try {
    const { rows } = await executeCached(h, 'hasPendingRecord', [workflowId], () =>
      h.edge
        .selectFrom('saf_pending_transactions')
        .select('workflow_id')
        .where('workflow_id', '=', workflowId),
    );
    return rows.length > 0;
  } catch (error) {
    throw translateDriverError(error, `look up the SAF record of workflow ${workflowId}`);
  }
}
