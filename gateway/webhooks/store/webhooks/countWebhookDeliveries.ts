import { WEBHOOK_DELIVERY_STATUSES, translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** How many deliveries a registration has in each status. */
export type DeliveryCounts = Record<(typeof WEBHOOK_DELIVERY_STATUSES)[number], number>;

/** Count a registration's deliveries by status. */
export async function countWebhookDeliveries(
  h: CloudHandle,
  webhookId: string,
): Promise<DeliveryCounts> {
  try {
    const rows = await h.cloud
      .selectFrom('webhook_deliveries')
      .select(['status', (eb) => eb.fn.countAll().as('n')])
      .where('webhook_id', '=', webhookId)
      .groupBy('status')
      .execute();
    const counts = Object.fromEntries(
      WEBHOOK_DELIVERY_STATUSES.map((s) => [s, 0]),
    ) as DeliveryCounts;
    for (const row of rows)
      if (row.status in counts)
        counts[row.status as keyof DeliveryCounts] = h.codec.parseInt(row.n);
    return counts;
  } catch (error) {
    throw translateDriverError(error, `count deliveries of webhook ${webhookId}`);
  }
}
