import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { DELIVERY_COLUMNS, rowToDelivery, type DeliveryRecord } from './delivery.js';

/** Filters and page of {@link listWebhookDeliveries}. */
export interface DeliveryFilter {
  webhookId: string;
  status?: string;
  eventType?: string;
  eventId?: string;
  /** Created at or after. */
  since?: Date;
  /** Created before. */
  until?: Date;
  /** Page size (1–500). */
  limit: number;
  /** Only deliveries with a lower sequence number (the next page). */
  beforeSequence?: number;
}

/** A registration's deliveries, newest first (by sequence). */
export async function listWebhookDeliveries(
  h: CloudHandle,
  filter: DeliveryFilter,
): Promise<DeliveryRecord[]> {
  try {
    let query = h.cloud
      .selectFrom('webhook_deliveries')
      .select(DELIVERY_COLUMNS)
      .where('webhook_id', '=', filter.webhookId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.eventType !== undefined) query = query.where('event_type', '=', filter.eventType);
    if (filter.eventId !== undefined) query = query.where('event_id', '=', filter.eventId);
    if (filter.since) query = query.where('created_at', '>=', h.codec.time(filter.since));
    if (filter.until) query = query.where('created_at', '<', h.codec.time(filter.until));
    if (filter.beforeSequence !== undefined)
      query = query.where('sequence', '<', filter.beforeSequence);
    const rows = await query
      .orderBy('sequence', 'desc')
      .limit(Math.min(Math.max(filter.limit, 1), 500))
      .execute();
    return rows.map((row) => rowToDelivery(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, `list deliveries of webhook ${filter.webhookId}`);
  }
}
