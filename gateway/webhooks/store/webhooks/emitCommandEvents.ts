/**
 * Webhook events of the command lifecycle, derived from its audit rows (appendCommandAudit
 * calls this in the same transaction): COMMAND_EXECUTED → `command.executed`,
 * COMMAND_FAILED and COMMAND_EXPIRED → `command.failed`. Deriving them from the audit trail
 * keeps one place where "a command finished" is decided, whichever path finished it (an ack
 * over the socket or REST, retries used up, expiry). The command's type and status are read
 * only when someone subscribes. Cloud tier only.
 */
import type { CommandActor } from '../../../commands/store/commands/command.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { emitWebhookEvents, hasWebhookSubscribers } from './emitWebhookEvents.js';
import type { WebhookEvent } from './webhookEvent.js';

/** Audit event → webhook kind, for the audit events that have one. */
const KIND_OF_AUDIT_EVENT: Readonly<Record<string, 'command.executed' | 'command.failed'>> = {
  COMMAND_EXECUTED: 'command.executed',
  COMMAND_FAILED: 'command.failed',
  COMMAND_EXPIRED: 'command.failed',
};

/** An audit row as {@link emitCommandEvents} reads it. */
export interface CommandAuditFact {
  event: string;
  deviceId?: string;
  commandId?: string;
  details?: Record<string, unknown>;
  batchId?: string;
  broadcastId?: string;
  /** Who made the change, when not the call's actor. */
  actor?: { actor: string };
}

/** Emit the webhook events of `entries` (audit rows of `actor`); see the module comment. */
export async function emitCommandEvents(
  h: CloudHandle,
  actor: CommandActor,
  entries: readonly CommandAuditFact[],
  now: Date,
): Promise<void> {
  const facts = entries.filter(
    (e): e is CommandAuditFact & { commandId: string } =>
      e.commandId !== undefined && KIND_OF_AUDIT_EVENT[e.event] !== undefined,
  );
  if (facts.length === 0) return;
  const kinds = [...new Set(facts.map((f) => KIND_OF_AUDIT_EVENT[f.event]!))];
  if (!(await hasWebhookSubscribers(h, kinds))) return;
  const rows = await h.cloud
    .selectFrom('device_commands')
    .select([
      'command_id',
      'device_id',
      'command_type',
      'status',
      'error',
      'batch_id',
      'broadcast_id',
    ])
    .where(
      'command_id',
      'in',
      facts.map((f) => f.commandId),
    )
    .execute();
  const byId = new Map(rows.map((r) => [r.command_id, r]));
  const events = facts.map((f): WebhookEvent => {
    const row = byId.get(f.commandId);
    const detailError = typeof f.details?.error === 'string' ? f.details.error : null;
    return {
      kind: KIND_OF_AUDIT_EVENT[f.event]!,
      data: {
        command_id: f.commandId,
        device_id: row?.device_id ?? f.deviceId ?? '',
        command_type: row?.command_type ?? null,
        status: row?.status ?? (f.event === 'COMMAND_EXECUTED' ? 'EXECUTED' : 'FAILED'),
        audit_event: f.event,
        error: row?.error ?? detailError,
        batch_id: row?.batch_id ?? f.batchId ?? null,
        broadcast_id: row?.broadcast_id ?? f.broadcastId ?? null,
        actor: (f.actor ?? actor).actor,
      },
    };
  });
  await emitWebhookEvents(h, events, now);
}
