/**
 * Expire PENDING approvals whose `expires_at` has passed, whatever they hold (a device
 * command, a batch, a broadcast — nothing of it exists yet): status EXPIRED, an
 * APPROVAL_EXPIRED audit row each. At most `limit` per call, FOR UPDATE SKIP LOCKED (an
 * approval being decided right now is left to its decision, which sees the expiry itself),
 * one transaction, with an `approval.decided` webhook event each. Run by every gateway's
 * maintenance pass; safe to run concurrently.
 */
import { sql } from 'kysely';
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudStore } from '../../../../runtime/index.js';
import { emitWebhookEvents } from '../../../webhooks/store/webhooks/emitWebhookEvents.js';
import { requestOperation, requestSubject } from './approval.js';

/** An approval that expired. */
export interface ExpiredApproval {
  approvalId: string;
  requestedBy: string;
  commandRequest: unknown;
  /** Approvals it had collected. */
  approvals: number;
}

/** Expire what is due at `now`; returns the approvals expired. */
export async function expireApprovals(
  store: CloudStore,
  actor: CommandActor,
  now: Date,
  limit = 500,
): Promise<ExpiredApproval[]> {
  try {
    return await store.transaction(async (tx) => {
      const at = tx.codec.time(now);
      const result = await sql<{
        approval_id: string;
        requested_by: string;
        command_request: unknown;
        approvals: number | string;
      }>`
        WITH due AS (
          SELECT approval_id FROM command_approvals
          WHERE status = 'PENDING' AND expires_at <= ${at}::timestamptz
          ORDER BY expires_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        UPDATE command_approvals AS a SET status = 'EXPIRED', decided_at = ${at}::timestamptz
        FROM due WHERE a.approval_id = due.approval_id
        RETURNING a.approval_id, a.requested_by, a.command_request,
          (SELECT count(*) FROM approval_responses r
           WHERE r.approval_id = a.approval_id AND r.decision = 'APPROVE') AS approvals`.execute(
        tx.db,
      );
      const expired = result.rows.map((r) => ({
        approvalId: r.approval_id,
        requestedBy: r.requested_by,
        commandRequest: tx.codec.parseJson(r.command_request),
        approvals: tx.codec.parseInt(r.approvals),
      }));
      await appendCommandAudit(
        tx,
        actor,
        expired.map((e) => ({
          event: 'APPROVAL_EXPIRED',
          ...requestSubject(e.commandRequest),
          details: { approval_id: e.approvalId, requested_by: e.requestedBy },
        })),
        now,
      );
      // last in the transaction: emitting locks the subscribed webhook registrations
      await emitWebhookEvents(
        tx,
        expired.map((e) => {
          const subject = requestSubject(e.commandRequest);
          return {
            kind: 'approval.decided' as const,
            data: {
              approval_id: e.approvalId,
              command_id: subject.commandId ?? null,
              device_id: subject.deviceId ?? null,
              decision: 'EXPIRED' as const,
              decided_by: null,
              approvals: e.approvals,
              details: requestOperation(e.commandRequest),
            },
          };
        }),
        now,
      );
      return expired;
    });
  } catch (error) {
    throw translateDriverError(error, 'expire approvals');
  }
}
