import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** A device status change to write. */
export interface DeviceStatusChange {
  status: string;
  /** The actor snapshot, kept under `metadata.actor` (other metadata untouched). */
  actor: unknown;
  /** New `last_seen`; absent leaves it. */
  lastSeen?: Date;
}

/** Write a device's status and actor snapshot in one statement. */
export async function saveDeviceStatus(
  h: CloudHandle,
  deviceId: string,
  change: DeviceStatusChange,
): Promise<void> {
  try {
    await h.cloud
      .updateTable('edge_devices')
      .set({
        status: change.status,
        metadata: sql<string>`jsonb_set(COALESCE(metadata, '{}'::jsonb), '{actor}', CAST(${h.codec.json(change.actor)} AS jsonb))`,
        ...(change.lastSeen ? { last_seen: h.codec.time(change.lastSeen) } : {}),
      })
      .where('device_id', '=', deviceId)
      .execute();
  } catch (error) {
    throw translateDriverError(error, `save status of device ${deviceId}`);
  }
}
