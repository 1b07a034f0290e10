/**
 * Record the outcome of one claimed delivery attempt: DELIVERED, FAILED with the next
 * attempt's time, or DEAD. Applied only while the claim holds (same attempt number, lease
 * not taken over, not redelivered meanwhile); otherwise only the attempt's history entry is
 * kept and false is returned. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import type { ClaimedDelivery } from './claimWebhookDeliveries.js';
import type { WebhookAttempt } from './delivery.js';

/** What an attempt led to. */
export type AttemptOutcome =
  { status: 'DELIVERED' } | { status: 'FAILED'; nextAttemptAt: Date } | { status: 'DEAD' };

/** Record `entry` (the attempt) and `outcome` on `claim`'s delivery. */
export async function recordWebhookAttempt(
  h: CloudHandle,
  claim: Pick<ClaimedDelivery, 'deliveryId' | 'attempt' | 'leaseUntil'>,
  entry: WebhookAttempt,
  outcome: AttemptOutcome,
  now: Date,
): Promise<boolean> {
  const history = sql<string>`attempts || jsonb_build_array(CAST(${JSON.stringify(entry)} AS jsonb))`;
  try {
    const updated = await h.cloud
      .updateTable('webhook_deliveries')
      .set({
        status: outcome.status,
        attempts: history,
        last_status_code: entry.status_code,
        last_error: entry.error,
        next_attempt_at: outcome.status === 'FAILED' ? h.codec.time(outcome.nextAttemptAt) : null,
        ...(outcome.status === 'DELIVERED' ? { delivered_at: h.codec.time(now) } : {}),
      })
      .where('delivery_id', '=', claim.deliveryId)
      .where('attempt_count', '=', claim.attempt)
      .where('next_attempt_at', '=', h.codec.time(claim.leaseUntil))
      .where('status', 'in', ['PENDING', 'FAILED'])
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return true;
    await h.cloud
      .updateTable('webhook_deliveries')
      .set({ attempts: history })
      .where('delivery_id', '=', claim.deliveryId)
      .execute();
    return false;
  } catch (error) {
    throw translateDriverError(error, `record attempt of webhook delivery ${claim.deliveryId}`);
  }
}
