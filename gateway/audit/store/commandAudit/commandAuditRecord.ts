/** A command_audit_log row as the audit API returns it. Cloud tier only. */
import type { Codec } from '../../../../runtime/index.js';

/** The columns an audit read returns (not the generated search vector). */
export const COMMAND_AUDIT_COLUMNS = [
  'id',
  'event_type',
  'actor',
  'actor_role',
  'device_id',
  'command_id',
  'batch_id',
  'broadcast_id',
  'details',
  'source_ip',
  'created_at',
] as const;

/** One audit row. */
export interface CommandAuditRecord {
  id: number;
  eventType: string;
  actor: string | null;
  actorRole: string | null;
  deviceId: string | null;
  commandId: string | null;
  batchId: string | null;
  broadcastId: string | null;
  details: Record<string, unknown>;
  sourceIp: string | null;
  createdAt: Date;
}

/** An audit row as selected with {@link COMMAND_AUDIT_COLUMNS}. */
export interface CommandAuditRow {
  id: number | string;
  event_type: string;
  actor: string | null;
  actor_role: string | null;
  device_id: string | null;
  command_id: string | null;
  batch_id: string | null;
  broadcast_id: string | null;
  details: unknown;
  source_ip: string | null;
  created_at: unknown;
}

/** Decode an audit row. */
export function rowToCommandAudit(codec: Codec, row: CommandAuditRow): CommandAuditRecord {
  const details = codec.parseJson(row.details);
  return {
    id: codec.parseInt(row.id),
    eventType: row.event_type,
    actor: row.actor,
    actorRole: row.actor_role,
    deviceId: row.device_id,
    commandId: row.command_id,
    batchId: row.batch_id,
    broadcastId: row.broadcast_id,
    details:
      details !== null && typeof details === 'object' && !Array.isArray(details)
        ? (details as Record<string, unknown>)
        : {},
    sourceIp: row.source_ip,
    createdAt: codec.parseTime(row.created_at),
  };
}
