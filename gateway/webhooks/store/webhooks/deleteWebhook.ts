import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** Delete a registration and (by cascade) its delivery history; false when there is none. */
export async function deleteWebhook(h: CloudHandle, webhookId: string): Promise<boolean> {
  try {
    const result = await h.cloud
      .deleteFrom('webhook_registrations')
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  } catch (error) {
    throw translateDriverError(error, `delete webhook ${webhookId}`);
  }
}
