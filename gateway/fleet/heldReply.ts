/**
 * The answer to a fleet request held for approval (governance/heldFleetOperations.ts): 202
 * with the approval and its `Location`, as `POST /api/v1/devices/{id}/commands` answers a
 * held command — so a client handles every held request one way.
 */
import type { FastifyReply } from 'fastify';
import type { ApprovalRecord } from '../governance/store/approvals/index.js';
import { approvalJson, approvalSchema } from '../governance/present.js';
import type { DocumentedResponse } from '../openapi.js';

/** What a route documents its held answer as. */
export const HELD_SUMMARY = '202 with the approval when a policy holds it for approval';

/** The held answer, for a route's `otherResponses`. */
export const HELD_RESPONSE: Readonly<Record<number, DocumentedResponse>> = {
  202: {
    description: 'held for approval: the approval request',
    headers: { Location: { description: 'the approval to decide on', required: true } },
    body: approvalSchema,
  },
};

/** Answer 202 with `approval`. */
export function replyHeld(reply: FastifyReply, approval: ApprovalRecord): FastifyReply {
  return reply
    .code(202)
    .header('location', `/api/v1/approvals/${approval.approvalId}`)
    .send(approvalJson(approval));
}
