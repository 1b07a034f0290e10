/**
 * Approvals (`/api/v1/approvals`): commands, command batches and broadcasts held until
 * enough distinct approvers agree (decideApproval.ts; the kinds in heldRequests.ts). Every operator may read them; deciding needs one of the approver
 * roles the covering policy named, checked per approval — so the route admits every
 * operator role and the decision says 403 NOT_AN_APPROVER where it must.
 */
import { z } from 'zod';
import { APPROVAL_STATUSES } from '../../runtime/index.js';
import { getApproval, listApprovals } from './store/approvals/index.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { decodeCursor, encodeCursor } from '../fleet/cursor.js';
import { commandJson, commandSchema } from '../link/present.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { decideApproval, type Decision } from './decideApproval.js';
import { approvalJson, approvalSchema } from './present.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const tags = ['approvals'];

const idParams = z.strictObject({ id: z.uuid() });
const listQuery = z.strictObject({
  status: z.enum(APPROVAL_STATUSES).optional(),
  requested_by: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(200).optional(),
});
const decisionBody = z.strictObject({ comment: z.string().max(2000).optional() });
const decisionResponse = z.object({
  approval: approvalSchema,
  command: commandSchema.nullable(),
});

/** Register the approval routes on `ctx`. */
export function registerApprovalRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/approvals',
      summary: 'approvals, newest first (filter by status or requester)',
      tags,
      access: { roles: READ },
      query: listQuery,
      response: z.object({
        approvals: z.array(approvalSchema),
        next_cursor: z.string().nullable(),
      }),
    },
    async ({ query }) => {
      const before = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined;
      const approvals = await listApprovals(ctx.store, {
        limit: query.limit,
        ...(query.status !== undefined ? { status: query.status } : {}),
        ...(query.requested_by !== undefined ? { requestedBy: query.requested_by } : {}),
        ...(before ? { before: { createdAt: before.createdAt, approvalId: before.id } } : {}),
      });
      const last = approvals.at(-1);
      return {
        approvals: approvals.map(approvalJson),
        next_cursor:
          last && approvals.length === query.limit
            ? encodeCursor(last.createdAt, last.approvalId)
            : null,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/approvals/:id',
      summary: 'an approval with its responses and the request it holds',
      tags,
      access: { roles: READ },
      params: idParams,
      response: approvalSchema,
    },
    async ({ params }) => {
      const approval = await getApproval(ctx.store, params.id);
      if (!approval) throw new Problem(404, 'APPROVAL_NOT_FOUND', `no approval ${params.id}`);
      return approvalJson(approval);
    },
  );

  const decide = (decision: Decision, url: string, summary: string) =>
    route(
      ctx,
      {
        method: 'POST',
        url,
        summary,
        tags,
        access: { roles: READ },
        params: idParams,
        body: decisionBody,
        response: decisionResponse,
        bodyLimit: 16 * 1024,
      },
      async ({ params, body, principal, request }) => {
        const outcome = await decideApproval(
          ctx,
          { approvalId: params.id, decision, comment: body.comment ?? null },
          auditActor(principal, request),
        );
        return {
          approval: approvalJson(outcome.approval),
          command:
            outcome.released?.kind === 'device_command'
              ? commandJson(outcome.released.command)
              : null,
        };
      },
    );
  decide(
    'APPROVE',
    '/api/v1/approvals/:id/approve',
    "approve a held command, batch or broadcast (not its requester; each approver counts once); the last needed approval releases it — `command` is the released command, a released batch or broadcast is named by the approval's `result` (batch_id, broadcast_id) and started",
  );
  decide(
    'REJECT',
    '/api/v1/approvals/:id/reject',
    'reject a held command, batch or broadcast (any approver, or the requester withdrawing it)',
  );
}
