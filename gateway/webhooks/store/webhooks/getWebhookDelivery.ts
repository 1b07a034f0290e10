import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { DELIVERY_COLUMNS, rowToDelivery, type DeliveryRecord } from './delivery.js';

/** One delivery of a registration, or undefined. */
export async function getWebhookDelivery(
  h: CloudHandle,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('webhook_deliveries')
      .select(DELIVERY_COLUMNS)
      .where('webhook_id', '=', webhookId)
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirst();
    return row && rowToDelivery(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `get webhook delivery ${deliveryId}`);
  }
}
