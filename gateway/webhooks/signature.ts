/**
 * Signing webhook requests. Each request carries
 *
 * - `X-Saffron-Timestamp`: Unix time in seconds when it was sent;
 * - `X-Saffron-Signature`: `v1=` + hex HMAC-SHA256, keyed with the registration's signing
 *   secret (its UTF-8 bytes, `whsec_…` included), over `<timestamp>.<raw body>`.
 *
 * A receiver recomputes the HMAC over the exact bytes it received, compares in constant
 * time, and refuses timestamps too far from its clock (replays). Signing the timestamp with
 * the body is what makes an old, captured request useless: its timestamp cannot be moved.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Header names of a webhook request. */
export const WEBHOOK_HEADERS = {
  /** The event id (the same on every attempt and for every registration): dedupe on it. */
  eventId: 'x-saffron-event-id',
  eventType: 'x-saffron-event-type',
  /** This delivery (event × registration). */
  deliveryId: 'x-saffron-delivery-id',
  webhookId: 'x-saffron-webhook-id',
  /** The event's position among this registration's events (1, 2, 3, …). */
  sequence: 'x-saffron-sequence',
  /** 1 for the first attempt of the delivery. */
  attempt: 'x-saffron-attempt',
  timestamp: 'x-saffron-timestamp',
  signature: 'x-saffron-signature',
} as const;

/** A fresh signing secret (`whsec_` and 32 random bytes, base64url). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** The `X-Saffron-Signature` value of `body` sent at `timestamp` (Unix seconds). */
export function signWebhookPayload(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What a receiver checks. */
export interface WebhookSignatureCheck {
  secret: string;
  /** The raw request body, exactly as received. */
  body: string;
  /** `X-Saffron-Timestamp`. */
  timestamp: string | undefined;
  /** `X-Saffron-Signature`. */
  signature: string | undefined;
  /** Largest accepted distance from `now`, in seconds (default 300). */
  toleranceSeconds?: number;
  now?: Date;
}

/** Whether a received webhook request is authentic and fresh (see the module comment). */
export function verifyWebhookSignature(check: WebhookSignatureCheck): boolean {
  if (check.timestamp === undefined || check.signature === undefined) return false;
  if (!/^\d{1,12}$/.test(check.timestamp)) return false;
  const timestamp = Number(check.timestamp);
  const now = Math.floor((check.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > (check.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhookPayload(check.secret, timestamp, check.body));
  const given = Buffer.from(check.signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
