/**
 * Asking for approval — the one path every held request takes, whatever it holds (a command
 * to one device, a command batch, a broadcast): its command_approvals row with the
 * APPROVAL_REQUESTED audit row, then the `approval.requested` webhook event, in the caller's
 * transaction. So no kind of request can be held without its audit row and its event.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type CloudHandle } from '../../runtime/index.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { insertApproval, requestSubject, type ApprovalRecord } from './store/approvals/index.js';
import { emitWebhookEvent } from '../webhooks/store/webhooks/index.js';
import type { ApprovalTerms } from './policies.js';

/** The fields every held request has besides its `kind` and what it holds. */
export const heldTermsShape = {
  /** The risk level of its command (the highest of its commands, for a batch). */
  risk_level: z.string(),
  /** The requester's role when asking (the audit actor role of what the release creates). */
  requested_role: z.string(),
  /** Roles whose holders may decide (the policy's, frozen at request time). */
  approver_roles: z.array(z.string()),
  policy_name: z.string(),
};

/** The common fields of a request held under `terms` by a requester of `role`. */
export const heldTerms = (terms: ApprovalTerms, risk: string, role: string) => ({
  risk_level: risk,
  requested_role: role,
  approver_roles: terms.approverRoles,
  policy_name: terms.policy.name,
});

/** A request to hold for approval. */
export interface ApprovalRequest {
  /** What is held (command_approvals.command_request), with its reserved id. */
  held: Record<string, unknown>;
  terms: ApprovalTerms;
  /** Who asks, never counted as an approver (default: the acting actor). */
  requestedBy?: string;
  /** The command type the webhook event names; null when the request holds several. */
  commandType: string | null;
  risk: string;
  /**
   * Details of the audit row and the webhook event besides the policy and the risk level:
   * ids and counts only, never payloads.
   */
  details?: Record<string, unknown>;
}

/** Hold `request` (PENDING) as `actor` at `now`; returns the approval. */
export async function requestApproval(
  tx: CloudHandle,
  request: ApprovalRequest,
  actor: CommandActor,
  now: Date,
): Promise<ApprovalRecord> {
  const { terms } = request;
  const requestedBy = request.requestedBy ?? actor.actor;
  const expiresAt = new Date(now.getTime() + terms.ttlSeconds * 1000);
  const approval = await insertApproval(
    tx,
    {
      approvalId: randomUUID(),
      policyId: terms.policy.policyId,
      requestedBy,
      commandRequest: request.held,
      requiredApprovals: terms.minApprovals,
      expiresAt,
      details: {
        policy: terms.policy.name,
        ...(request.commandType !== null ? { command_type: request.commandType } : {}),
        risk_level: request.risk,
        approver_roles: terms.approverRoles,
        ...request.details,
      },
    },
    actor,
    now,
  );
  const subject = requestSubject(request.held);
  // last in the transaction: emitting locks the subscribed webhook registrations
  await emitWebhookEvent(
    tx,
    'approval.requested',
    {
      approval_id: approval.approvalId,
      command_id: subject.commandId ?? null,
      device_id: subject.deviceId ?? null,
      command_type: request.commandType,
      requested_by: requestedBy,
      required_approvals: terms.minApprovals,
      expires_at: expiresAt.toISOString(),
      details: { policy: terms.policy.name, risk_level: request.risk, ...request.details },
    },
    now,
  );
  return approval;
}
