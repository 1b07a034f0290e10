import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** Set `last_seen` of every device in `deviceIds` to `now` (one statement; heartbeats). */
export async function touchDevices(
  h: StoreHandle,
  deviceIds: readonly string[],
  now: Date,
): Promise<void> {
  if (deviceIds.length === 0) return;
  try {
    await h.db
      .updateTable('edge_devices')
      .set({ last_seen: h.codec.time(now) })
      .where('device_id', 'in', deviceIds)
      .execute();
  } catch (error) {
    throw translateDriverError(error, `touch ${deviceIds.length} device(s)`);
  }
}
