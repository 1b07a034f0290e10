import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { requestSubject, rowToApproval, type ApprovalRecord } from './approval.js';

/** An approval to request. */
export interface NewApproval {
  approvalId: string;
  policyId: string | null;
  /** The requester's operator name (never counted as an approver). */
  requestedBy: string;
  commandRequest: Record<string, unknown>;
  requiredApprovals: number;
  expiresAt: Date;
  /** Extra audit details (the policy's name, the command type, …). */
  details?: Record<string, unknown>;
}

/** Hold a request for approval (PENDING) with an APPROVAL_REQUESTED audit row. */
export async function insertApproval(
  h: CloudHandle,
  approval: NewApproval,
  actor: CommandActor,
  now: Date,
): Promise<ApprovalRecord> {
  try {
    const row = await h.cloud
      .insertInto('command_approvals')
      .values({
        approval_id: approval.approvalId,
        policy_id: approval.policyId,
        requested_by: approval.requestedBy,
        command_request: h.codec.json(approval.commandRequest),
        status: 'PENDING',
        required_approvals: approval.requiredApprovals,
        expires_at: h.codec.time(approval.expiresAt),
        created_at: h.codec.time(now),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'APPROVAL_REQUESTED',
          ...requestSubject(approval.commandRequest),
          details: {
            approval_id: approval.approvalId,
            policy_id: approval.policyId,
            required_approvals: approval.requiredApprovals,
            expires_at: approval.expiresAt.toISOString(),
            ...approval.details,
          },
        },
      ],
      now,
    );
    return rowToApproval(h.codec, row, []);
  } catch (error) {
    throw translateDriverError(error, 'request approval');
  }
}
