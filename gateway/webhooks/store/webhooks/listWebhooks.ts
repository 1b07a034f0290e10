import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToWebhook, WEBHOOK_COLUMNS, type WebhookRecord } from './registration.js';

/** A page of {@link listWebhooks}. */
export interface WebhookPage {
  /** Page size (1–500). */
  limit: number;
  /** Start after this registration (creation time and id of the last one seen). */
  after?: { createdAt: Date; id: string };
}

/** Webhook registrations, oldest first (keyset paging on creation time and id). */
export async function listWebhooks(h: CloudHandle, page: WebhookPage): Promise<WebhookRecord[]> {
  try {
    let query = h.cloud.selectFrom('webhook_registrations').select(WEBHOOK_COLUMNS);
    if (page.after) {
      const at = h.codec.time(page.after.createdAt);
      const id = page.after.id;
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '>', at),
          eb.and([eb('created_at', '=', at), eb('webhook_id', '>', id)]),
        ]),
      );
    }
    const rows = await query
      .orderBy('created_at')
      .orderBy('webhook_id')
      .limit(Math.min(Math.max(page.limit, 1), 500))
      .execute();
    return rows.map((row) => rowToWebhook(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list webhooks');
  }
}
