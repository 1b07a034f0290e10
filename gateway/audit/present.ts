/** Command audit rows as the audit API shows them (snake_case, ISO 8601 times). */
import { z } from 'zod';
import type { CommandAuditRecord } from './store/commandAudit/index.js';

/** The JSON form of an audit row. */
export function auditJson(r: CommandAuditRecord) {
  return {
    id: r.id,
    created_at: r.createdAt.toISOString(),
    event_type: r.eventType,
    actor: r.actor,
    actor_role: r.actorRole,
    device_id: r.deviceId,
    command_id: r.commandId,
    batch_id: r.batchId,
    broadcast_id: r.broadcastId,
    source_ip: r.sourceIp,
    details: r.details,
  };
}

/** Schema of {@link auditJson}. */
export const auditSchema = z.object({
  id: z.number().int(),
  created_at: z.string(),
  event_type: z.string(),
  actor: z.string().nullable(),
  actor_role: z.string().nullable(),
  device_id: z.string().nullable(),
  command_id: z.string().nullable(),
  batch_id: z.string().nullable(),
  broadcast_id: z.string().nullable(),
  source_ip: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
});

/** The columns of a CSV export, in order (the keys of {@link auditJson}). */
export const AUDIT_CSV_COLUMNS = [
  'id',
  'created_at',
  'event_type',
  'actor',
  'actor_role',
  'device_id',
  'command_id',
  'batch_id',
  'broadcast_id',
  'source_ip',
  'details',
] as const;
