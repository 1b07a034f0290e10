import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { DEVICE_COLUMNS, rowToDevice, type DeviceRecord } from './device.js';

/** Registry fields an operator may change; absent fields stay as they are. */
export interface DeviceChanges {
  deviceName?: string;
  deviceType?: string;
  location?: string;
  firmwareVersion?: string;
  /**
   * Replaces the operator metadata; what the system keeps there — the device's `metrics`
   * report and its status actor's snapshot (`actor`) — is kept.
   */
  metadata?: Record<string, unknown>;
}

/**
 * Change a device's registry fields; undefined when there is no such device. Cloud dialects
 * only (jsonb), like the table.
 */
export async function updateDevice(
  h: CloudHandle,
  deviceId: string,
  changes: DeviceChanges,
  now: Date,
): Promise<DeviceRecord | undefined> {
  try {
    const row = await h.cloud
      .updateTable('edge_devices')
      .set({
        ...(changes.deviceName !== undefined ? { device_name: changes.deviceName } : {}),
        ...(changes.deviceType !== undefined ? { device_type: changes.deviceType } : {}),
        ...(changes.location !== undefined ? { location: changes.location } : {}),
        ...(changes.firmwareVersion !== undefined
          ? { firmware_version: changes.firmwareVersion }
          : {}),
        // one statement, so a metrics report arriving meanwhile is never lost
        ...(changes.metadata !== undefined
          ? {
              metadata: sql<string>`CAST(${h.codec.json(changes.metadata)} AS jsonb)
                || jsonb_strip_nulls(jsonb_build_object(
                  'metrics', metadata -> 'metrics',
                  'actor', metadata -> 'actor'))`,
            }
          : {}),
        updated_at: h.codec.time(now),
      })
      .where('device_id', '=', deviceId)
      .returning(DEVICE_COLUMNS)
      .executeTakeFirst();
    return row && rowToDevice(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `update device ${deviceId}`);
  }
}
