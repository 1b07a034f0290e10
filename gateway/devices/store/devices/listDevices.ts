import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { DEVICE_COLUMNS, rowToDevice, type DeviceRecord } from './device.js';

/** Filters and paging of {@link listDevices}. */
export interface DeviceFilter {
  status?: string;
  deviceType?: string;
  location?: string;
  /** Page size (default 100, at most 500). */
  limit?: number;
  /** Return devices whose id sorts after this one (keyset paging by device_id). */
  after?: string;
}

/** Devices matching `filter`, by device id. */
export async function listDevices(
  h: CloudHandle,
  filter: DeviceFilter = {},
): Promise<DeviceRecord[]> {
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 500);
  let query = h.cloud.selectFrom('edge_devices').select(DEVICE_COLUMNS);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.deviceType) query = query.where('device_type', '=', filter.deviceType);
  if (filter.location) query = query.where('location', '=', filter.location);
  if (filter.after !== undefined) query = query.where('device_id', '>', filter.after);
  try {
    const rows = await query.orderBy('device_id').limit(limit).execute();
    return rows.map((row) => rowToDevice(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list devices');
  }
}
