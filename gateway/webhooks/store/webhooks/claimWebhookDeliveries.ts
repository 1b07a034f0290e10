/**
 * Claim due webhook deliveries for sending: for each active registration, its head — the
 * PENDING/FAILED delivery with the lowest sequence — if it is due; at most `limit` of them,
 * FOR UPDATE SKIP LOCKED so several gateway processes can dispatch at once. A claim is a
 * lease: `attempt_count` moves on and `next_attempt_at` is set to the lease's end, so the
 * head is not due for anyone else while its request is in flight, and the registration's
 * later deliveries wait behind it (one in flight per registration, in order). If the
 * dispatcher dies mid-request the lease ends and the delivery is attempted again: delivery is
 * at least once, and receivers dedupe on the event id. The registration's URL and sealed
 * secret come with the claim. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import type { WebhookEventKind } from './webhookEvent.js';

/** A delivery claimed for one attempt. */
export interface ClaimedDelivery {
  deliveryId: string;
  webhookId: string;
  eventId: string;
  eventType: WebhookEventKind;
  /** The envelope to send. */
  payload: unknown;
  sequence: number;
  /** This attempt's number (1 for the first). */
  attempt: number;
  /** When the claim lapses; recording the attempt checks it still holds. */
  leaseUntil: Date;
  url: string;
  secretCiphertext: string;
  maxRetries: number;
}

/** Claim up to `limit` due heads at `now`, leased until `leaseUntil`. */
export async function claimWebhookDeliveries(
  h: CloudHandle,
  options: { limit: number; leaseUntil: Date },
  now: Date,
): Promise<ClaimedDelivery[]> {
  try {
    const at = h.codec.time(now);
    const lease = h.codec.time(options.leaseUntil);
    const result = await sql<{
      delivery_id: string;
      webhook_id: string;
      event_id: string;
      event_type: string;
      payload: unknown;
      sequence: number | string;
      attempt_count: number | string;
      url: string;
      secret_ciphertext: string;
      max_retries: number | string;
    }>`
      WITH heads AS (
        SELECT head.delivery_id FROM webhook_registrations AS r
        CROSS JOIN LATERAL (
          SELECT d.delivery_id, d.next_attempt_at FROM webhook_deliveries AS d
          WHERE d.webhook_id = r.webhook_id AND d.status IN ('PENDING', 'FAILED')
          ORDER BY d.sequence
          LIMIT 1) AS head
        WHERE r.active AND head.next_attempt_at <= CAST(${at} AS timestamptz)
      ), due AS (
        SELECT d.delivery_id FROM webhook_deliveries AS d
        WHERE d.delivery_id IN (SELECT delivery_id FROM heads)
          AND d.status IN ('PENDING', 'FAILED')
          AND d.next_attempt_at <= CAST(${at} AS timestamptz)
        ORDER BY d.next_attempt_at
        LIMIT ${options.limit}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE webhook_deliveries AS d
      SET attempt_count = d.attempt_count + 1, next_attempt_at = CAST(${lease} AS timestamptz)
      FROM due, webhook_registrations AS r
      WHERE d.delivery_id = due.delivery_id AND r.webhook_id = d.webhook_id
      RETURNING d.delivery_id, d.webhook_id, d.event_id, d.event_type, d.payload, d.sequence,
        d.attempt_count, r.url, r.secret_ciphertext, r.max_retries`.execute(h.db);
    return result.rows.map((r) => ({
      deliveryId: r.delivery_id,
      webhookId: r.webhook_id,
      eventId: r.event_id,
      eventType: r.event_type as WebhookEventKind,
      payload: h.codec.parseJson(r.payload),
      sequence: h.codec.parseInt(r.sequence),
      attempt: h.codec.parseInt(r.attempt_count),
      leaseUntil: options.leaseUntil,
      url: r.url,
      secretCiphertext: r.secret_ciphertext,
      maxRetries: h.codec.parseInt(r.max_retries),
    }));
  } catch (error) {
    throw translateDriverError(error, 'claim webhook deliveries');
  }
}
