import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { emitCommandEvents } from '../../../webhooks/store/webhooks/emitCommandEvents.js';
import type { CommandActor, CommandAuditEvent, ControlAuditEvent } from './command.js';

/** One audit row: a command's change (with its id), or another control-plane change. */
export interface CommandAuditEntry {
  event: CommandAuditEvent | ControlAuditEvent;
  /** The device concerned, if any. */
  deviceId?: string;
  /** The command concerned; set for every command event. */
  commandId?: string;
  /** What changed; never payloads or results (they may be large), never card data. */
  details?: Record<string, unknown>;
  /** The command batch concerned, if any. */
  batchId?: string;
  /** The command broadcast concerned, if any. */
  broadcastId?: string;
  /** Who made this change, when not the call's actor (a group of acks from many devices). */
  actor?: CommandActor;
}

/**
 * Append audit rows for changes made by `actor` (or each entry's own); call in the transaction of the change. Rows
 * of finished commands also enqueue their webhook events (webhooks/emitCommandEvents.ts).
 */
export async function appendCommandAudit(
  h: CloudHandle,
  actor: CommandActor,
  entries: readonly CommandAuditEntry[],
  now: Date,
): Promise<void> {
  if (entries.length === 0) return;
  try {
    await h.cloud
      .insertInto('command_audit_log')
      .values(
        entries.map((e) => ({
          event_type: e.event,
          actor: (e.actor ?? actor).actor,
          actor_role: (e.actor ?? actor).role,
          device_id: e.deviceId ?? null,
          command_id: e.commandId ?? null,
          batch_id: e.batchId ?? null,
          broadcast_id: e.broadcastId ?? null,
          details: h.codec.json(e.details ?? {}),
          source_ip: (e.actor ?? actor).sourceIp ?? null,
          created_at: h.codec.time(now),
        })),
      )
      .execute();
  } catch (error) {
    throw translateDriverError(error, `append ${entries.length} command audit row(s)`);
  }
  // finished commands are webhook events too, committed with their audit rows (outbox)
  await emitCommandEvents(h, actor, entries, now);
}
