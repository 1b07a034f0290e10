import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { DEVICE_COLUMNS, rowToDevice, type DeviceRecord } from './device.js';

/** The device `deviceId`, or undefined. */
export async function getDevice(
  h: CloudHandle,
  deviceId: string,
): Promise<DeviceRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('edge_devices')
      .select(DEVICE_COLUMNS)
      .where('device_id', '=', deviceId)
      .executeTakeFirst();
    return row && rowToDevice(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `get device ${deviceId}`);
  }
}
