import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Devices that are not OFFLINE but have shown no sign of life since `before` — left behind
 * by a gateway process that died with their sessions open. At most `limit`.
 */
export async function listStaleDevices(
  h: CloudHandle,
  before: Date,
  limit = 500,
): Promise<string[]> {
  try {
    const rows = await h.cloud
      .selectFrom('edge_devices')
      .select('device_id')
      .where('status', '<>', 'OFFLINE')
      .where((eb) =>
        eb.or([eb('last_seen', 'is', null), eb('last_seen', '<', h.codec.time(before))]),
      )
      .limit(limit)
      .execute();
    return rows.map((r) => r.device_id);
  } catch (error) {
    throw translateDriverError(error, 'list stale devices');
  }
}
