/**
 * The command approval record: a request held until enough distinct approvers agree, with
 * each approver's response. Lifecycle (statuses from APPROVAL_STATUSES):
 *
 * | from     | event                                                   | to       | audit event        |
 * |----------|---------------------------------------------------------|----------|--------------------|
 * | (new)    | a policy requires approval of a command                 | PENDING  | APPROVAL_REQUESTED |
 * | PENDING  | an approver approves, fewer than required so far        | PENDING  | APPROVAL_APPROVED  |
 * | PENDING  | the required number approved; what it holds is created  | EXECUTED | APPROVAL_GRANTED   |
 * | PENDING  | the required number approved; the device is gone        | APPROVED | APPROVAL_GRANTED   |
 * | PENDING  | any eligible approver (or the requester) rejects        | REJECTED | APPROVAL_REJECTED  |
 * | PENDING  | `expires_at` passed (maintenance pass, or on access)    | EXPIRED  | APPROVAL_EXPIRED   |
 *
 * `command_request` is what was asked for, owned by the gateway (a device command, a command
 * batch or a broadcast: its `kind`); it names the id what it holds will have once released
 * (`command_id`, `batch_id`, `broadcast_id`), so the audit trail of the request and of what
 * it created share one id. Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** One approver's response. */
export interface ApprovalResponseRecord {
  responseId: string;
  approver: string;
  decision: 'APPROVE' | 'REJECT';
  comment: string | null;
  createdAt: Date;
}

/** A command approval. */
export interface ApprovalRecord {
  approvalId: string;
  policyId: string | null;
  requestedBy: string;
  commandRequest: unknown;
  status: string;
  requiredApprovals: number;
  expiresAt: Date | null;
  decidedAt: Date | null;
  executedAt: Date | null;
  result: unknown;
  createdAt: Date;
  /** Responses, oldest first. */
  responses: ApprovalResponseRecord[];
}

/** A command_approvals row. */
export interface ApprovalRow {
  approval_id: string;
  policy_id: string | null;
  requested_by: string;
  command_request: unknown;
  status: string;
  required_approvals: number | string;
  expires_at: unknown;
  decided_at: unknown;
  executed_at: unknown;
  result: unknown;
  created_at: unknown;
}

/** An approval_responses row. */
export interface ApprovalResponseRow {
  response_id: string;
  approval_id: string;
  approver: string;
  decision: string;
  comment: string | null;
  created_at: unknown;
}

const time = (codec: Codec, raw: unknown) =>
  raw === null || raw === undefined ? null : codec.parseTime(raw);

/** Decode an approval row and its response rows. */
export function rowToApproval(
  codec: Codec,
  row: ApprovalRow,
  responses: readonly ApprovalResponseRow[],
): ApprovalRecord {
  return {
    approvalId: row.approval_id,
    policyId: row.policy_id,
    requestedBy: row.requested_by,
    commandRequest: codec.parseJson(row.command_request),
    status: row.status,
    requiredApprovals: codec.parseInt(row.required_approvals),
    expiresAt: time(codec, row.expires_at),
    decidedAt: time(codec, row.decided_at),
    executedAt: time(codec, row.executed_at),
    result: row.result === null || row.result === undefined ? null : codec.parseJson(row.result),
    createdAt: codec.parseTime(row.created_at),
    responses: responses
      .filter((r) => r.approval_id === row.approval_id)
      .map((r): ApprovalResponseRecord => ({
        responseId: r.response_id,
        approver: r.approver,
        decision: r.decision === 'REJECT' ? 'REJECT' : 'APPROVE',
        comment: r.comment,
        createdAt: codec.parseTime(r.created_at),
      }))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()),
  };
}

/**
 * What a request names, for audit rows: the device and command of a device command, the
 * batch or broadcast id reserved for a fleet operation (each absent when not named).
 */
export function requestSubject(request: unknown): {
  deviceId?: string;
  commandId?: string;
  batchId?: string;
  broadcastId?: string;
} {
  if (typeof request !== 'object' || request === null) return {};
  const r = request as Record<string, unknown>;
  return {
    ...(typeof r.device_id === 'string' ? { deviceId: r.device_id } : {}),
    ...(typeof r.command_id === 'string' ? { commandId: r.command_id } : {}),
    ...(typeof r.batch_id === 'string' ? { batchId: r.batch_id } : {}),
    ...(typeof r.broadcast_id === 'string' ? { broadcastId: r.broadcast_id } : {}),
  };
}

/**
 * The fleet operation a request names, as webhook event details (`batch_id`,
 * `broadcast_id`): the webhook data has fields for a device command only.
 */
export function requestOperation(request: unknown): { batch_id?: string; broadcast_id?: string } {
  const subject = requestSubject(request);
  return {
    ...(subject.batchId !== undefined ? { batch_id: subject.batchId } : {}),
    ...(subject.broadcastId !== undefined ? { broadcast_id: subject.broadcastId } : {}),
  };
}
