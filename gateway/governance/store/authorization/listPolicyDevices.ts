import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** The attributes of a device that authorization policies match on. */
export interface PolicyDevice {
  deviceId: string;
  deviceType: string | null;
  location: string | null;
}

/** The policy attributes of the devices among `deviceIds` that exist (in no order). */
export async function listPolicyDevices(
  h: CloudHandle,
  deviceIds: readonly string[],
): Promise<PolicyDevice[]> {
  if (deviceIds.length === 0) return [];
  try {
    const found: PolicyDevice[] = [];
    // in slices, so a batch to many devices stays within the driver's parameter limit
    for (let i = 0; i < deviceIds.length; i += 5000) {
      const rows = await h.cloud
        .selectFrom('edge_devices')
        .select(['device_id', 'device_type', 'location'])
        .where('device_id', 'in', deviceIds.slice(i, i + 5000))
        .execute();
      for (const r of rows)
        found.push({ deviceId: r.device_id, deviceType: r.device_type, location: r.location });
    }
    return found;
  } catch (error) {
    throw translateDriverError(error, 'read device attributes');
  }
}
