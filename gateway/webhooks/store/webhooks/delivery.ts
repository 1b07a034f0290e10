/**
 * The webhook delivery record: one event for one registration, with its retry state and the
 * history of its attempts. Lifecycle (statuses from WEBHOOK_DELIVERY_STATUSES):
 *
 * | from            | event                                          | to        |
 * |-----------------|------------------------------------------------|-----------|
 * | (new)           | an event is emitted                            | PENDING   |
 * | PENDING, FAILED | the receiver answers 2xx                       | DELIVERED |
 * | PENDING, FAILED | any other answer, or none, with attempts left  | FAILED (next_attempt_at = backoff) |
 * | PENDING, FAILED | the same with attempts used up                 | DEAD      |
 * | FAILED, DEAD    | an operator redelivers it                      | PENDING (attempts count from 0 again; history kept) |
 *
 * A registration's deliveries go out one at a time in `sequence` order: only the lowest
 * PENDING/FAILED one is ever attempted, so a receiver that is down holds its later events
 * back until it answers again. A dead-lettered delivery stops holding them back.
 * Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';
import type { WebhookEventKind } from './webhookEvent.js';

/** One attempt, as kept in the delivery's history. */
export interface WebhookAttempt {
  /** 1 for the first attempt (counting again from 1 after a manual redelivery). */
  attempt: number;
  /** When the request was sent (ISO 8601). */
  at: string;
  /** The receiver's HTTP status, or null when there was no answer. */
  status_code: number | null;
  /** Why it failed (no secret, no body), or null. */
  error: string | null;
  duration_ms: number;
  /** What the attempt led to. */
  outcome: 'DELIVERED' | 'FAILED' | 'DEAD';
}

/** The columns a delivery read returns. */
export const DELIVERY_COLUMNS = [
  'delivery_id',
  'webhook_id',
  'event_id',
  'event_type',
  'payload',
  'status',
  'attempt_count',
  'next_attempt_at',
  'last_status_code',
  'last_error',
  'created_at',
  'delivered_at',
  'sequence',
  'attempts',
] as const;

/** A webhook delivery. */
export interface DeliveryRecord {
  deliveryId: string;
  webhookId: string;
  eventId: string;
  eventType: WebhookEventKind;
  /** The envelope sent as the request body. */
  payload: unknown;
  status: string;
  attemptCount: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  sequence: number;
  attempts: WebhookAttempt[];
}

/** A delivery row as selected with {@link DELIVERY_COLUMNS}. */
export interface DeliveryRow {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: unknown;
  status: string;
  attempt_count: number | string;
  next_attempt_at: unknown;
  last_status_code: number | null;
  last_error: string | null;
  created_at: unknown;
  delivered_at: unknown;
  sequence: number | string;
  attempts: unknown;
}

const time = (codec: Codec, raw: unknown) =>
  raw === null || raw === undefined ? null : codec.parseTime(raw);

/** Decode a delivery row. */
export function rowToDelivery(codec: Codec, row: DeliveryRow): DeliveryRecord {
  const attempts = codec.parseJson(row.attempts);
  return {
    deliveryId: row.delivery_id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.event_type as WebhookEventKind,
    payload: codec.parseJson(row.payload),
    status: row.status,
    attemptCount: codec.parseInt(row.attempt_count),
    nextAttemptAt: time(codec, row.next_attempt_at),
    lastStatusCode: row.last_status_code === null ? null : codec.parseInt(row.last_status_code),
    lastError: row.last_error,
    createdAt: codec.parseTime(row.created_at),
    deliveredAt: time(codec, row.delivered_at),
    sequence: codec.parseInt(row.sequence),
    attempts: Array.isArray(attempts) ? (attempts as WebhookAttempt[]) : [],
  };
}
