import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** One approver's decision. */
export interface NewApprovalResponse {
  responseId: string;
  approvalId: string;
  approver: string;
  decision: 'APPROVE' | 'REJECT';
  comment: string | null;
}

/**
 * Record a decision. An approver responds once per approval (the unique key): a second
 * response is a ConflictError. The caller holds the approval's lock and writes the audit
 * row. Call inside a transaction.
 */
export async function insertApprovalResponse(
  h: CloudHandle,
  response: NewApprovalResponse,
  now: Date,
): Promise<void> {
  try {
    await h.cloud
      .insertInto('approval_responses')
      .values({
        response_id: response.responseId,
        approval_id: response.approvalId,
        approver: response.approver,
        decision: response.decision,
        comment: response.comment,
        created_at: h.codec.time(now),
      })
      .execute();
  } catch (error) {
    throw translateDriverError(error, `record a response to approval ${response.approvalId}`);
  }
}
