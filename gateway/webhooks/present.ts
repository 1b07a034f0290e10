/**
 * Webhook registrations and deliveries as the API shows them (snake_case, ISO 8601 times),
 * with the zod schemas of the OpenAPI document. A registration never shows its signing
 * secret: only the create and rotate answers carry it, once.
 */
import { z } from 'zod';
import { WEBHOOK_DELIVERY_STATUSES } from '../../runtime/index.js';
import {
  WEBHOOK_EVENT_KINDS,
  type DeliveryCounts,
  type DeliveryRecord,
  type WebhookRecord,
} from './store/webhooks/index.js';
import { isoOrNull } from '../fields.js';

/** The JSON form of a registration (no secret). */
export function webhookJson(w: WebhookRecord) {
  return {
    webhook_id: w.webhookId,
    name: w.name,
    url: w.url,
    event_types: w.eventTypes,
    active: w.active,
    max_retries: w.maxRetries,
    created_by: w.createdBy,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
    last_sequence: w.eventSequence,
  };
}

/** Schema of {@link webhookJson}. */
export const webhookSchema = z.object({
  webhook_id: z.uuid(),
  name: z.string().nullable(),
  url: z.string(),
  event_types: z.array(z.enum(WEBHOOK_EVENT_KINDS)),
  active: z.boolean(),
  max_retries: z.number().int(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_sequence: z.number().int().meta({
    description: 'sequence number of the last event enqueued for this registration',
  }),
});

/** Schema of delivery counts by status. */
export const deliveryCountsSchema = z.object(
  Object.fromEntries(WEBHOOK_DELIVERY_STATUSES.map((s) => [s, z.number().int()])) as Record<
    (typeof WEBHOOK_DELIVERY_STATUSES)[number],
    z.ZodNumber
  >,
);

/** A registration with its delivery counts. */
export const webhookDetailSchema = webhookSchema.extend({ deliveries: deliveryCountsSchema });

/** The JSON form of a registration with its delivery counts. */
export function webhookDetailJson(w: WebhookRecord, counts: DeliveryCounts) {
  return { ...webhookJson(w), deliveries: counts };
}

const attemptSchema = z.object({
  attempt: z.number().int(),
  at: z.string(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number(),
  outcome: z.enum(['DELIVERED', 'FAILED', 'DEAD']),
});

/** The JSON form of a delivery. */
export function deliveryJson(d: DeliveryRecord) {
  return {
    delivery_id: d.deliveryId,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    sequence: d.sequence,
    status: d.status,
    attempt_count: d.attemptCount,
    next_attempt_at: isoOrNull(d.nextAttemptAt),
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    delivered_at: isoOrNull(d.deliveredAt),
    attempts: d.attempts,
    payload: d.payload,
  };
}

/** Schema of {@link deliveryJson}. */
export const deliverySchema = z.object({
  delivery_id: z.uuid(),
  webhook_id: z.uuid(),
  event_id: z.uuid(),
  event_type: z.enum(WEBHOOK_EVENT_KINDS),
  sequence: z.number().int(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attempt_count: z.number().int(),
  next_attempt_at: z.string().nullable(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: z.string(),
  delivered_at: z.string().nullable(),
  attempts: z.array(attemptSchema),
  payload: z.unknown().meta({ description: 'the envelope sent: {id, type, created_at, data}' }),
});
