import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToWebhook, WEBHOOK_COLUMNS, type WebhookRecord } from './registration.js';
import type { WebhookEventKind } from './webhookEvent.js';

/** What may change on a registration; absent fields stay. */
export interface WebhookChanges {
  name?: string | null;
  url?: string;
  eventTypes?: readonly WebhookEventKind[];
  active?: boolean;
  maxRetries?: number;
  /** A new sealed signing secret (rotation). */
  secretCiphertext?: string;
}

/**
 * Change a registration; undefined when there is none. Takes the registration's row lock,
 * so it waits for transactions emitting to it: a change applies between two events, never
 * in the middle of one.
 */
export async function updateWebhook(
  h: CloudHandle,
  webhookId: string,
  changes: WebhookChanges,
  now: Date,
): Promise<WebhookRecord | undefined> {
  try {
    const row = await h.cloud
      .updateTable('webhook_registrations')
      .set({
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.url !== undefined ? { url: changes.url } : {}),
        ...(changes.eventTypes !== undefined
          ? { event_types: h.codec.json(changes.eventTypes) }
          : {}),
        ...(changes.active !== undefined ? { active: h.codec.bool(changes.active) } : {}),
        ...(changes.maxRetries !== undefined ? { max_retries: changes.maxRetries } : {}),
        ...(changes.secretCiphertext !== undefined
          ? { secret_ciphertext: changes.secretCiphertext }
          : {}),
        updated_at: h.codec.time(now),
      })
      .where('webhook_id', '=', webhookId)
      .returning(WEBHOOK_COLUMNS)
      .executeTakeFirst();
    return row && rowToWebhook(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `update webhook ${webhookId}`);
  }
}
