/**
 * Webhook events: the closed set of kinds a registration subscribes to, the data each kind
 * carries, and the envelope a receiver gets. Which fact emits which kind, in the transaction
 * of that fact (an outbox — an event exists exactly when its fact was committed):
 *
 * | kind                 | fact                                                    | emitted by |
 * |----------------------|---------------------------------------------------------|------------|
 * | `workflow.completed` | a workflow ends COMPLETED                               | the gateway runtime's settled hook (gateway/webhooks/workflowEvents.ts) |
 * | `workflow.failed`    | a workflow ends FAILED or FAILED_ROLLED_BACK            | same       |
 * | `device.online`      | a device's WebSocket session starts (none was current)  | gateway/fleet/deviceHost.ts |
 * | `device.offline`     | its current session ends, or it is found stale          | same       |
 * | `command.executed`   | a COMMAND_EXECUTED audit row (the device acked)         | appendCommandAudit |
 * | `command.failed`     | a COMMAND_FAILED or COMMAND_EXPIRED audit row           | same       |
 * | `saf.batch_synced`   | a SAF upload stored at least one new record             | insertSafTransactions |
 * | `approval.requested` | a command needing approval is held                      | approvals code, through {@link emitWebhookEvent} |
 * | `approval.decided`   | an approval is granted, rejected or expires             | same       |
 * | `config.published`   | a configuration layer version is published              | gateway/config/routes.ts |
 *
 * The envelope is `{id, type, created_at, data}`: `id` is the event id (the same for every
 * registration that receives the event, and across redeliveries, so receivers dedupe on it),
 * `type` the kind. Data never holds secrets, command payloads or results, or card data.
 */

/** Every kind of webhook event, as registrations name them in `event_types`. */
export const WEBHOOK_EVENT_KINDS = [
  'workflow.completed',
  'workflow.failed',
  'device.online',
  'device.offline',
  'command.executed',
  'command.failed',
  'saf.batch_synced',
  'approval.requested',
  'approval.decided',
  'config.published',
] as const;
/** A webhook event kind. */
export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];

/** Whether `value` is a {@link WebhookEventKind}. */
export function isWebhookEventKind(value: unknown): value is WebhookEventKind {
  return (WEBHOOK_EVENT_KINDS as readonly unknown[]).includes(value);
}

/** Data of `workflow.completed` / `workflow.failed` (the final state is not included). */
export interface WorkflowEventData {
  workflow_id: string;
  workflow_type: string;
  workflow_version: string | null;
  /** COMPLETED, FAILED or FAILED_ROLLED_BACK. */
  status: string;
  owner_id: string | null;
  data_region: string | null;
}

/** Data of `device.online` / `device.offline`. */
export interface DeviceEventData {
  device_id: string;
  /** The device status after the change (ONLINE, OFFLINE or SYNCING). */
  status: string;
  /** What happened: `connected`, `disconnected` or `stale` (no sign of life for too long). */
  reason: 'connected' | 'disconnected' | 'stale';
}

/** Data of `command.executed` / `command.failed`. */
export interface CommandEventData {
  command_id: string;
  device_id: string;
  command_type: string | null;
  /** The command's status after the change (EXECUTED or FAILED). */
  status: string;
  /** The audit event behind it: COMMAND_EXECUTED, COMMAND_FAILED or COMMAND_EXPIRED. */
  audit_event: string;
  error: string | null;
  batch_id: string | null;
  broadcast_id: string | null;
  /** Who recorded it: the device, or `system` (retries used up, expiry). */
  actor: string;
}

/** Data of `saf.batch_synced`. */
export interface SafBatchEventData {
  device_id: string;
  /** Records this upload stored (not held before). */
  stored: number;
  /** Records of this upload the cloud already held. */
  duplicates: number;
  /** Records refused for a conflicting id or sequence number. */
  conflicts: number;
  /** Workflow ids of the stored records. */
  workflow_ids: string[];
  /** The device's highest accepted sequence number after the upload. */
  last_sequence_number: number;
}

/** Data of `approval.requested`. */
export interface ApprovalRequestedData {
  approval_id: string;
  command_id: string | null;
  device_id: string | null;
  command_type: string | null;
  requested_by: string;
  /** Distinct approvers needed (other than the requester). */
  required_approvals: number;
  expires_at: string | null;
  /** Anything else worth telling (risk level, policy name); no payloads, no secrets. */
  details?: Record<string, unknown>;
}

/** Data of `approval.decided`. */
export interface ApprovalDecidedData {
  approval_id: string;
  command_id: string | null;
  device_id: string | null;
  /** APPROVED, REJECTED or EXPIRED. */
  decision: 'APPROVED' | 'REJECTED' | 'EXPIRED';
  /** The approver whose response decided it; null when it expired. */
  decided_by: string | null;
  approvals: number;
  details?: Record<string, unknown>;
}

/** Data of `config.published`. */
export interface ConfigEventData {
  config_id: string;
  scope: string;
  scope_key: string;
  version: number;
  etag: string;
  checksum: string;
  published_by: string | null;
}

/** The data each kind carries. */
export interface WebhookEventData {
  'workflow.completed': WorkflowEventData;
  'workflow.failed': WorkflowEventData;
  'device.online': DeviceEventData;
  'device.offline': DeviceEventData;
  'command.executed': CommandEventData;
  'command.failed': CommandEventData;
  'saf.batch_synced': SafBatchEventData;
  'approval.requested': ApprovalRequestedData;
  'approval.decided': ApprovalDecidedData;
  'config.published': ConfigEventData;
}

/** An event to emit: its kind and data (and, optionally, its id). */
export type WebhookEvent = {
  [K in WebhookEventKind]: {
    kind: K;
    data: WebhookEventData[K];
    /** A UUID; default: a fresh one. Give one to make a re-emission of the same fact dedupe. */
    eventId?: string;
  };
}[WebhookEventKind];

/** What a receiver gets as the request body. */
export interface WebhookEnvelope {
  id: string;
  type: WebhookEventKind;
  created_at: string;
  data: unknown;
}
