import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToWebhook, WEBHOOK_COLUMNS, type WebhookRecord } from './registration.js';
import type { WebhookEventKind } from './webhookEvent.js';

/** A registration to create. */
export interface NewWebhook {
  webhookId: string;
  name: string | null;
  url: string;
  eventTypes: readonly WebhookEventKind[];
  /** The signing secret, already sealed. */
  secretCiphertext: string;
  active: boolean;
  maxRetries: number;
  createdBy: string | null;
}

/** Create a webhook registration; it receives events emitted after its commit. */
export async function insertWebhook(
  h: CloudHandle,
  webhook: NewWebhook,
  now: Date,
): Promise<WebhookRecord> {
  try {
    const row = await h.cloud
      .insertInto('webhook_registrations')
      .values({
        webhook_id: webhook.webhookId,
        name: webhook.name,
        url: webhook.url,
        event_types: h.codec.json(webhook.eventTypes),
        secret_ciphertext: webhook.secretCiphertext,
        active: h.codec.bool(webhook.active),
        max_retries: webhook.maxRetries,
        created_by: webhook.createdBy,
        created_at: h.codec.time(now),
        updated_at: h.codec.time(now),
      })
      .returning(WEBHOOK_COLUMNS)
      .executeTakeFirstOrThrow();
    return rowToWebhook(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create webhook ${webhook.webhookId}`);
  }
}
