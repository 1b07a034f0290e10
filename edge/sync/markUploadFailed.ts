/**
 * Writing down an upload that got no usable answer (network down, timeout, 5xx, refusal of
 * the whole batch): each record sent counts an attempt and keeps the reason in
 * `last_error`, and stays PENDING — it was maybe stored by the cloud, maybe not, and the
 * next upload settles which (the cloud answers a repeat as a duplicate).
 */
import { sql } from 'kysely';
import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';

/** Count a failed attempt for `workflowIds`, with `reason` (a code, never a body). */
export async function markUploadFailed(
  h: EdgeHandle,
  workflowIds: readonly string[],
  reason: string,
): Promise<void> {
  if (workflowIds.length === 0) return;
  try {
    await h.edge
      .updateTable('saf_pending_transactions')
      .set({ upload_attempts: sql<number>`upload_attempts + 1`, last_error: reason })
      .where('workflow_id', 'in', [...workflowIds])
      .where('status', '=', 'PENDING')
      .execute();
  } catch (error) {
    throw translateDriverError(error, 'record a failed SAF upload');
  }
}
