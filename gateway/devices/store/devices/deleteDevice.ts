import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Remove a device: its commands and assignments go with it (foreign-key cascades), and so do
 * the configuration layers published for it alone, so a later device registered under the
 * same id starts clean. Store-and-forward records stay (settlement outlives the device). Run
 * it inside a transaction. False when there is no such device.
 */
export async function deleteDevice(h: CloudHandle, deviceId: string): Promise<boolean> {
  try {
    await h.cloud
      .deleteFrom('device_configs')
      .where('scope', '=', 'device')
      .where('scope_key', '=', deviceId)
      .execute();
    const r = await h.cloud
      .deleteFrom('edge_devices')
      .where('device_id', '=', deviceId)
      .executeTakeFirst();
    return r.numDeletedRows > 0n;
  } catch (error) {
    throw translateDriverError(error, `delete device ${deviceId}`);
  }
}
