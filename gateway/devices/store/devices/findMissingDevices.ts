import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** Which of `deviceIds` are not registered (in the order given). */
export async function findMissingDevices(
  h: CloudHandle,
  deviceIds: readonly string[],
): Promise<string[]> {
  const present = new Set<string>();
  try {
    for (let i = 0; i < deviceIds.length; i += 1000) {
      const rows = await h.cloud
        .selectFrom('edge_devices')
        .select('device_id')
        .where('device_id', 'in', deviceIds.slice(i, i + 1000))
        .execute();
      for (const r of rows) present.add(r.device_id);
    }
    return deviceIds.filter((id) => !present.has(id));
  } catch (error) {
    throw translateDriverError(error, 'look up devices');
  }
}
