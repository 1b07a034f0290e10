/**
 * An approver's decision on a held command, taken under the approval's row lock so that
 * decisions on one approval happen one at a time across every gateway:
 *
 * - the approval must be PENDING (409 APPROVAL_NOT_PENDING) and not past its deadline — an
 *   expired one is marked EXPIRED right here (and the caller gets 409 APPROVAL_EXPIRED), so
 *   expiry does not wait for the maintenance pass;
 * - the requester may not approve their own request (403 SELF_APPROVAL_FORBIDDEN) but may
 *   reject it (withdraw the request); everyone else must hold one of the approver roles the
 *   policy named when the request was made, for every command type it holds (403
 *   NOT_AN_APPROVER);
 * - each approver responds once (409 ALREADY_RESPONDED): the same person approving twice
 *   counts once. Identity is the operator name — every token of one name is one person;
 * - any rejection rejects the request; the approval that reaches the required number
 *   releases what it holds (heldRequests.ts) — the command, batch, broadcast or configuration
 *   layer — in the same transaction; a released batch or broadcast is started after the
 *   commit.
 *
 * Every response and every outcome has its audit row, and the outcome its
 * `approval.decided` webhook event, committed with it.
 */
import { randomUUID } from 'node:crypto';
import { type CloudHandle } from '../../runtime/index.js';
import { appendCommandAudit } from '../commands/store/commands/appendCommandAudit.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import {
  getApproval,
  insertApprovalResponse,
  requestSubject,
  settleApproval,
  type ApprovalRecord,
} from './store/approvals/index.js';
import { emitWebhookEvent } from '../webhooks/store/webhooks/index.js';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';
import {
  approverContexts,
  heldOf,
  releaseHeld,
  releasedId,
  startReleased,
  type Released,
  type ReleaseContext,
} from './heldRequests.js';
import { holdsRole, loadRoleSet, requesterOf } from './roles.js';

/** A decision. */
export type Decision = 'APPROVE' | 'REJECT';

/** What a decision did. */
export interface DecisionOutcome {
  approval: ApprovalRecord;
  /** What the decision released (a command, a batch, a broadcast), if it did. */
  released?: Released;
}

type Attempt = DecisionOutcome | { expired: ApprovalRecord };

/**
 * The origin of the command notifications a release sends: no gateway's hub has this id, so
 * every gateway — this one included — pushes the command if it holds the device's socket.
 */
const APPROVALS_ORIGIN = 'approvals';

async function decided(
  tx: CloudHandle,
  approval: ApprovalRecord,
  decision: 'APPROVED' | 'REJECTED' | 'EXPIRED',
  by: string | null,
  details: Record<string, unknown>,
  now: Date,
): Promise<void> {
  const subject = requestSubject(approval.commandRequest);
  await emitWebhookEvent(
    tx,
    'approval.decided',
    {
      approval_id: approval.approvalId,
      command_id: subject.commandId ?? null,
      device_id: subject.deviceId ?? null,
      decision,
      decided_by: by,
      approvals: approval.responses.filter((r) => r.decision === 'APPROVE').length,
      details: {
        ...(subject.batchId !== undefined ? { batch_id: subject.batchId } : {}),
        ...(subject.broadcastId !== undefined ? { broadcast_id: subject.broadcastId } : {}),
        ...details,
      },
    },
    now,
  );
}

async function attempt(
  tx: CloudHandle,
  input: { approvalId: string; decision: Decision; comment: string | null },
  actor: CommandActor,
  release: ReleaseContext,
  now: Date,
): Promise<Attempt> {
  const approval = await getApproval(tx, input.approvalId, true);
  if (!approval) throw new Problem(404, 'APPROVAL_NOT_FOUND', `no approval ${input.approvalId}`);
  if (approval.status !== 'PENDING')
    throw new Problem(
      409,
      'APPROVAL_NOT_PENDING',
      `approval ${approval.approvalId} is ${approval.status}`,
      { status: approval.status },
    );
  const subject = requestSubject(approval.commandRequest);
  if (approval.expiresAt !== null && approval.expiresAt.getTime() <= now.getTime()) {
    await settleApproval(tx, approval.approvalId, { status: 'EXPIRED' }, now);
    await appendCommandAudit(
      tx,
      { actor: 'system', role: 'system' },
      [
        {
          event: 'APPROVAL_EXPIRED',
          ...subject,
          details: { approval_id: approval.approvalId, requested_by: approval.requestedBy },
        },
      ],
      now,
    );
    await decided(tx, approval, 'EXPIRED', null, {}, now);
    return { expired: approval };
  }
  const held = heldOf(approval);
  const approver = actor.actor;
  const withdrawing = input.decision === 'REJECT' && approver === approval.requestedBy;
  if (input.decision === 'APPROVE' && approver === approval.requestedBy)
    throw new Problem(
      403,
      'SELF_APPROVAL_FORBIDDEN',
      'the requester of a request may not approve it',
    );
  if (!withdrawing) {
    const roles = await loadRoleSet(tx, requesterOf(actor), now);
    const eligible = approverContexts(held).every((context) =>
      held.approver_roles.some((role) => holdsRole(roles, role, context)),
    );
    if (!eligible)
      throw new Problem(
        403,
        'NOT_AN_APPROVER',
        `deciding needs one of the roles ${held.approver_roles.join(', ')}`,
        { approver_roles: held.approver_roles },
      );
  }
  if (approval.responses.some((r) => r.approver === approver))
    throw new Problem(
      409,
      'ALREADY_RESPONDED',
      `${approver} has already responded to approval ${approval.approvalId}`,
    );
  await insertApprovalResponse(
    tx,
    {
      responseId: randomUUID(),
      approvalId: approval.approvalId,
      approver,
      decision: input.decision,
      comment: input.comment,
    },
    now,
  );
  const approvers = [
    ...approval.responses.filter((r) => r.decision === 'APPROVE').map((r) => r.approver),
    ...(input.decision === 'APPROVE' ? [approver] : []),
  ];
  await appendCommandAudit(
    tx,
    actor,
    [
      {
        event: input.decision === 'APPROVE' ? 'APPROVAL_APPROVED' : 'APPROVAL_REJECTED',
        ...subject,
        details: {
          approval_id: approval.approvalId,
          approvals: approvers.length,
          required_approvals: approval.requiredApprovals,
          ...(withdrawing ? { withdrawn: true } : {}),
          ...(input.comment !== null ? { comment: input.comment } : {}),
        },
      },
    ],
    now,
  );
  if (input.decision === 'REJECT') {
    await settleApproval(
      tx,
      approval.approvalId,
      { status: 'REJECTED', result: { rejected_by: approver, withdrawn: withdrawing } },
      now,
    );
    const after = (await getApproval(tx, approval.approvalId))!;
    await decided(tx, after, 'REJECTED', approver, { withdrawn: withdrawing }, now);
    return { approval: after };
  }
  if (approvers.length < approval.requiredApprovals) {
    return { approval: (await getApproval(tx, approval.approvalId))! };
  }
  const released = await releaseHeld(tx, approval, held, release, now);
  await settleApproval(
    tx,
    approval.approvalId,
    released
      ? {
          status: 'EXECUTED',
          executedAt: now,
          result: { ...releasedId(released), approved_by: approvers },
        }
      : { status: 'APPROVED', result: { error: 'DEVICE_NOT_FOUND', approved_by: approvers } },
    now,
  );
  await appendCommandAudit(
    tx,
    actor,
    [
      {
        event: 'APPROVAL_GRANTED',
        ...subject,
        details: {
          approval_id: approval.approvalId,
          approved_by: approvers,
          released: released !== undefined,
        },
      },
    ],
    now,
  );
  const after = (await getApproval(tx, approval.approvalId))!;
  await decided(tx, after, 'APPROVED', approver, { released: released !== undefined }, now);
  return released ? { approval: after, released } : { approval: after };
}

/** Record `actor`'s decision on approval `approvalId` (see the module comment). */
export async function decideApproval(
  ctx: GatewayContext,
  input: { approvalId: string; decision: Decision; comment: string | null },
  actor: CommandActor,
): Promise<DecisionOutcome> {
  const now = ctx.now();
  const outcome = await ctx.changes.transaction((tx, changed) =>
    attempt(tx, input, actor, { origin: APPROVALS_ORIGIN, keys: ctx.keys, changed }, now),
  );
  if ('expired' in outcome)
    throw new Problem(
      409,
      'APPROVAL_EXPIRED',
      `approval ${outcome.expired.approvalId} expired at ${outcome.expired.expiresAt?.toISOString()}`,
    );
  if (outcome.released) await startReleased(ctx, outcome.released, APPROVALS_ORIGIN);
  return outcome;
}
