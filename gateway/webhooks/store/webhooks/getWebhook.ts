import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToWebhook, WEBHOOK_COLUMNS, type WebhookRecord } from './registration.js';

/** A webhook registration, or undefined. */
export async function getWebhook(
  h: CloudHandle,
  webhookId: string,
): Promise<WebhookRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('webhook_registrations')
      .select(WEBHOOK_COLUMNS)
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst();
    return row && rowToWebhook(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `get webhook ${webhookId}`);
  }
}
