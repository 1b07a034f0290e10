/**
 * Writing down what the cloud answered to one upload, in the caller's transaction: every
 * record sent counts an attempt; the ones the cloud now holds (`synced_ids`, duplicates
 * included) become SYNCED with `synced_at`; the ones it refused become REJECTED with the
 * cloud's code in `last_error`. Only PENDING rows change, so an answer that arrives twice
 * (or late, after an operator acted) cannot move a record backwards.
 */
import { sql } from 'kysely';
import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';

/** The cloud's answer, by workflow id. */
export interface UploadOutcome {
  /** Every record sent. */
  attempted: readonly string[];
  synced: readonly string[];
  rejected: readonly { workflowId: string; code: string }[];
}

/** Apply `outcome` (see the module comment). */
export async function markUploadOutcome(
  tx: EdgeHandle,
  outcome: UploadOutcome,
  now: Date,
): Promise<void> {
  try {
    if (outcome.attempted.length > 0)
      await tx.edge
        .updateTable('saf_pending_transactions')
        .set({ upload_attempts: sql<number>`upload_attempts + 1` })
        .where('workflow_id', 'in', [...outcome.attempted])
        .where('status', '=', 'PENDING')
        .execute();
    if (outcome.synced.length > 0)
      await tx.edge
        .updateTable('saf_pending_transactions')
        .set({ status: 'SYNCED', synced_at: tx.codec.time(now), last_error: null })
        .where('workflow_id', 'in', [...outcome.synced])
        .where('status', '=', 'PENDING')
        .execute();
    const byCode = new Map<string, string[]>();
    for (const { workflowId, code } of outcome.rejected)
      byCode.set(code, [...(byCode.get(code) ?? []), workflowId]);
    for (const [code, ids] of byCode)
      await tx.edge
        .updateTable('saf_pending_transactions')
        .set({ status: 'REJECTED', last_error: code })
        .where('workflow_id', 'in', ids)
        .where('status', '=', 'PENDING')
        .execute();
  } catch (error) {
    throw translateDriverError(error, 'record the outcome of a SAF upload');
  }
}
