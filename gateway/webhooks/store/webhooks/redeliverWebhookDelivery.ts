/**
 * Manual redelivery: a FAILED or DEAD delivery goes back to PENDING, due at once, with a
 * fresh attempt budget (its history is kept). It becomes its registration's head if nothing
 * older is waiting, so it goes out next — after later events that were already delivered,
 * which is why receivers order by the envelope's time or the sequence header, and dedupe on
 * the event id. PENDING and DELIVERED deliveries are a conflict. Cloud tier only.
 */
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { DELIVERY_COLUMNS, rowToDelivery, type DeliveryRecord } from './delivery.js';

/** What a redelivery request did. */
export type RedeliverOutcome =
  | { kind: 'redelivered'; delivery: DeliveryRecord }
  | { kind: 'conflict'; delivery: DeliveryRecord }
  | { kind: 'not_found' };

/** Redeliver `deliveryId` of `webhookId` (see the module comment); run it in a transaction. */
export async function redeliverWebhookDelivery(
  h: CloudHandle,
  webhookId: string,
  deliveryId: string,
  now: Date,
): Promise<RedeliverOutcome> {
  try {
    const row = await h.cloud
      .selectFrom('webhook_deliveries')
      .select(DELIVERY_COLUMNS)
      .where('webhook_id', '=', webhookId)
      .where('delivery_id', '=', deliveryId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) return { kind: 'not_found' };
    const current = rowToDelivery(h.codec, row);
    if (current.status !== 'FAILED' && current.status !== 'DEAD')
      return { kind: 'conflict', delivery: current };
    const updated = await h.cloud
      .updateTable('webhook_deliveries')
      .set({ status: 'PENDING', attempt_count: 0, next_attempt_at: h.codec.time(now) })
      .where('delivery_id', '=', deliveryId)
      .returning(DELIVERY_COLUMNS)
      .executeTakeFirstOrThrow();
    return { kind: 'redelivered', delivery: rowToDelivery(h.codec, updated) };
  } catch (error) {
    throw translateDriverError(error, `redeliver webhook delivery ${deliveryId}`);
  }
}
