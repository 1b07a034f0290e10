import { translateDriverError } from '../../../../runtime/index.js';
import type { StoreHandle } from '../../../../runtime/index.js';

/** Delete a registration and (by cascade) its delivery history; false when there is none. */
export async function deleteWebhook(h: StoreHandle, webhookId: string): Promise<boolean> {
  try {
    const result = await h.db
      .deleteFrom('webhook_registrations')
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  } catch (error) {
    throw translateDriverError(error, `delete webhook ${webhookId}`);
  }
}
