import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** How an approval ends. */
export interface ApprovalSettlement {
  status: 'APPROVED' | 'REJECTED' | 'EXPIRED' | 'EXECUTED';
  /** When the request was carried out (EXECUTED). */
  executedAt?: Date;
  result?: Record<string, unknown>;
}

/**
 * Settle PENDING approval `approvalId` (decided now); false when it was no longer PENDING.
 * The caller holds its lock and writes the audit rows. Call inside a transaction.
 */
export async function settleApproval(
  h: CloudHandle,
  approvalId: string,
  settlement: ApprovalSettlement,
  now: Date,
): Promise<boolean> {
  try {
    const result = await h.cloud
      .updateTable('command_approvals')
      .set({
        status: settlement.status,
        decided_at: h.codec.time(now),
        executed_at: settlement.executedAt ? h.codec.time(settlement.executedAt) : null,
        result: settlement.result === undefined ? null : h.codec.json(settlement.result),
      })
      .where('approval_id', '=', approvalId)
      .where('status', '=', 'PENDING')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  } catch (error) {
    throw translateDriverError(error, `settle approval ${approvalId}`);
  }
}
