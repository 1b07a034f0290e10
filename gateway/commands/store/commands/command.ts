/**
 * The device command record as operations return it, and the command audit trail's event
 * names. Lifecycle (docs/architecture.md#cloud-and-edge; statuses from COMMAND_STATUSES):
 *
 * | from               | event                                      | to        | audit event        |
 * |--------------------|--------------------------------------------|-----------|--------------------|
 * | (new)              | operator creates it                        | PENDING   | COMMAND_CREATED    |
 * | (held for approval) | its approval is granted (no row before)   | PENDING   | COMMAND_CREATED    |
 * | PENDING (due)      | pushed over the socket / returned to a poll | DELIVERED | COMMAND_DELIVERED  |
 * | DELIVERED          | device reconnects without having acked     | DELIVERED | COMMAND_DELIVERED  |
 * | PENDING, DELIVERED | device acks EXECUTED / FAILED              | same      | COMMAND_EXECUTED / COMMAND_FAILED |
 * | DELIVERED          | no ack within the ack timeout, retries left | PENDING   | COMMAND_RETRIED    |
 * | DELIVERED          | no ack, retries used up                    | FAILED    | COMMAND_FAILED     |
 * | PENDING, DELIVERED | `expires_at` passed                        | FAILED    | COMMAND_EXPIRED    |
 * | PENDING            | its batch / broadcast is cancelled or halted | CANCELLED | COMMAND_CANCELLED |
 *
 * Every redelivery (a retry after the ack timeout, or a push on reconnect) counts against
 * `max_retries`. An expired command ends FAILED with error `expired` (the status set has no
 * EXPIRED; the audit event tells the two failures apart). Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** command_audit_log.event_type values of the command lifecycle. */
export const COMMAND_AUDIT_EVENTS = [
  'COMMAND_CREATED',
  'COMMAND_DELIVERED',
  'COMMAND_EXECUTED',
  'COMMAND_FAILED',
  'COMMAND_RETRIED',
  'COMMAND_EXPIRED',
  'COMMAND_CANCELLED',
] as const;
/** A command audit event. */
export type CommandAuditEvent = (typeof COMMAND_AUDIT_EVENTS)[number];

/**
 * command_audit_log.event_type values of other control-plane changes an auditor needs beside
 * commands: who registered, changed, rotated or deleted a device, and who registered a WASM
 * binary. These rows have no command id.
 */
export const CONTROL_AUDIT_EVENTS = [
  'DEVICE_REGISTERED',
  'DEVICE_UPDATED',
  'DEVICE_SECRET_ROTATED',
  'DEVICE_DELETED',
  'WASM_COMPONENT_REGISTERED',
  // fleet operations (gateway/fleet): batches, broadcasts, templates, schedules
  'BATCH_CREATED',
  'BATCH_FINISHED',
  'BATCH_CANCELLED',
  'BROADCAST_CREATED',
  'BROADCAST_PHASE_STARTED',
  'BROADCAST_HALTED',
  'BROADCAST_PAUSED',
  'BROADCAST_RESUMED',
  'BROADCAST_COMPLETED',
  'BROADCAST_CANCELLED',
  'TEMPLATE_CREATED',
  'TEMPLATE_APPLIED',
  'SCHEDULE_CREATED',
  'SCHEDULE_PAUSED',
  'SCHEDULE_RESUMED',
  'SCHEDULE_DELETED',
  'SCHEDULE_FIRED',
  // governance (gateway/governance): command versions, roles, policies, approvals, rate limits
  'COMMAND_VERSION_REGISTERED',
  'COMMAND_VERSION_DEPRECATED',
  'ROLE_CREATED',
  'ROLE_DELETED',
  'ROLE_ASSIGNED',
  'ROLE_UNASSIGNED',
  'AUTHORIZATION_POLICY_CREATED',
  'AUTHORIZATION_POLICY_UPDATED',
  'AUTHORIZATION_POLICY_DELETED',
  'APPROVAL_REQUESTED',
  'APPROVAL_APPROVED',
  'APPROVAL_REJECTED',
  'APPROVAL_GRANTED',
  'APPROVAL_EXPIRED',
  'RATE_LIMIT_RULE_CREATED',
  'RATE_LIMIT_RULE_UPDATED',
  'RATE_LIMIT_RULE_DELETED',
  // webhooks (gateway/webhooks) and audit retention (gateway/audit)
  'WEBHOOK_CREATED',
  'WEBHOOK_UPDATED',
  'WEBHOOK_DELETED',
  'WEBHOOK_SECRET_ROTATED',
  'WEBHOOK_DELIVERY_REDELIVERED',
  'WEBHOOK_DELIVERY_DEAD',
  'RETENTION_POLICY_CREATED',
  'RETENTION_POLICY_UPDATED',
  'RETENTION_POLICY_DELETED',
  'AUDIT_PURGED',
] as const;
/** A control-plane audit event. */
export type ControlAuditEvent = (typeof CONTROL_AUDIT_EVENTS)[number];

/** Who caused a command change, for its audit row. */
export interface CommandActor {
  /** Operator name, device id, or `system`. */
  actor: string;
  /** Operator role, `device` or `system`. */
  role: string;
  sourceIp?: string | null;
  /** The API token an operator acted with (role assignments may name it); not audited. */
  tokenId?: string;
}

/** The actor of changes the gateway makes on its own (retries, expiry). */
export const SYSTEM_ACTOR: CommandActor = { actor: 'system', role: 'system' };

/** Error text of a command whose retries ran out. */
export const MAX_RETRIES_ERROR = 'max retries exceeded';
/** Error text of an expired command. */
export const EXPIRED_ERROR = 'expired';

/** The columns a command read returns. */
export const COMMAND_COLUMNS = [
  'command_id',
  'device_id',
  'command_type',
  'payload',
  'status',
  'retry_count',
  'max_retries',
  'created_by',
  'result',
  'error',
  'next_attempt_at',
  'delivered_at',
  'expires_at',
  'created_at',
  'executed_at',
  'batch_id',
  'broadcast_id',
] as const;

/** A device command. */
export interface CommandRecord {
  commandId: string;
  deviceId: string;
  commandType: string;
  payload: unknown;
  status: string;
  retryCount: number;
  maxRetries: number;
  createdBy: string | null;
  result: unknown;
  error: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  expiresAt: Date | null;
  createdAt: Date;
  executedAt: Date | null;
  /** The batch that created it, if any. */
  batchId: string | null;
  /** The broadcast that created it, if any. */
  broadcastId: string | null;
}

/** A command row as selected with {@link COMMAND_COLUMNS}. */
export interface CommandRow {
  command_id: string;
  device_id: string;
  command_type: string;
  payload: unknown;
  status: string;
  retry_count: number | string;
  max_retries: number | string;
  created_by: string | null;
  result: unknown;
  error: string | null;
  next_attempt_at: unknown;
  delivered_at: unknown;
  expires_at: unknown;
  created_at: unknown;
  executed_at: unknown;
  batch_id: string | null;
  broadcast_id: string | null;
}

const time = (codec: Codec, raw: unknown) =>
  raw === null || raw === undefined ? null : codec.parseTime(raw);

/** Decode a command row. */
export function rowToCommand(codec: Codec, row: CommandRow): CommandRecord {
  return {
    commandId: row.command_id,
    deviceId: row.device_id,
    commandType: row.command_type,
    payload: codec.parseJson(row.payload) ?? {},
    status: row.status,
    retryCount: codec.parseInt(row.retry_count),
    maxRetries: codec.parseInt(row.max_retries),
    createdBy: row.created_by,
    result: row.result === null ? null : codec.parseJson(row.result),
    error: row.error,
    nextAttemptAt: time(codec, row.next_attempt_at),
    deliveredAt: time(codec, row.delivered_at),
    expiresAt: time(codec, row.expires_at),
    createdAt: codec.parseTime(row.created_at),
    executedAt: time(codec, row.executed_at),
    batchId: row.batch_id ?? null,
    broadcastId: row.broadcast_id ?? null,
  };
}

/** Oldest first (creation order is delivery order). */
export const byCreation = (a: CommandRecord, b: CommandRecord): number =>
  a.createdAt.getTime() - b.createdAt.getTime() || a.commandId.localeCompare(b.commandId);
