/**
 * The webhook registration record as operations return it. The signing secret is stored
 * sealed (`secret_ciphertext`, sealed by the gateway's keyring) and is not part of the
 * record: only the dispatcher reads it (claimWebhookDeliveries), and the API shows a secret
 * once, when it is created or rotated. Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';
import { isWebhookEventKind, type WebhookEventKind } from './webhookEvent.js';

/** The columns a registration read returns (never the secret). */
export const WEBHOOK_COLUMNS = [
  'webhook_id',
  'name',
  'url',
  'event_types',
  'active',
  'max_retries',
  'created_by',
  'created_at',
  'updated_at',
  'event_sequence',
] as const;

/** A webhook registration. */
export interface WebhookRecord {
  webhookId: string;
  name: string | null;
  url: string;
  eventTypes: WebhookEventKind[];
  active: boolean;
  /** Attempts after the first before a delivery is dead-lettered. */
  maxRetries: number;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The sequence number of the last event enqueued for it. */
  eventSequence: number;
}

/** A registration row as selected with {@link WEBHOOK_COLUMNS}. */
export interface WebhookRow {
  webhook_id: string;
  name: string | null;
  url: string;
  event_types: unknown;
  active: unknown;
  max_retries: number | string;
  created_by: string | null;
  created_at: unknown;
  updated_at: unknown;
  event_sequence: number | string;
}

/** Decode a registration row. */
export function rowToWebhook(codec: Codec, row: WebhookRow): WebhookRecord {
  const kinds = codec.parseJson(row.event_types);
  return {
    webhookId: row.webhook_id,
    name: row.name,
    url: row.url,
    eventTypes: Array.isArray(kinds) ? kinds.filter(isWebhookEventKind) : [],
    active: codec.parseBool(row.active),
    maxRetries: codec.parseInt(row.max_retries),
    createdBy: row.created_by,
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
    eventSequence: codec.parseInt(row.event_sequence),
  };
}
