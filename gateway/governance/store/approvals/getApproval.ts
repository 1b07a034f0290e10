import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToApproval, type ApprovalRecord } from './approval.js';

/**
 * Approval `approvalId` with its responses, or undefined. With `lock`, the approval row is
 * locked FOR UPDATE until the caller's transaction ends, so decisions on one approval are
 * taken one at a time across every gateway.
 */
export async function getApproval(
  h: CloudHandle,
  approvalId: string,
  lock = false,
): Promise<ApprovalRecord | undefined> {
  try {
    let query = h.cloud
      .selectFrom('command_approvals')
      .selectAll()
      .where('approval_id', '=', approvalId);
    if (lock) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) return undefined;
    const responses = await h.cloud
      .selectFrom('approval_responses')
      .selectAll()
      .where('approval_id', '=', approvalId)
      .execute();
    return rowToApproval(h.codec, row, responses);
  } catch (error) {
    throw translateDriverError(error, `read approval ${approvalId}`);
  }
}
