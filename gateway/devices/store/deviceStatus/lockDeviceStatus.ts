/**
 * Read a device's status and actor snapshot with the row locked until the transaction ends,
 * so status changes applied by different gateway processes happen one after the other.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** A device's stored status and actor snapshot (raw JSON, or null). */
export interface LockedDeviceStatus {
  status: string;
  actor: unknown;
}

/** Lock `deviceId`'s row and read its status; undefined when there is no such device. */
export async function lockDeviceStatus(
  h: CloudHandle,
  deviceId: string,
): Promise<LockedDeviceStatus | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('edge_devices')
      .select(['status', sql<unknown>`metadata -> 'actor'`.as('actor')])
      .where('device_id', '=', deviceId)
      .forUpdate()
      .executeTakeFirst();
    return row && { status: row.status, actor: h.codec.parseJson(row.actor) ?? null };
  } catch (error) {
    throw translateDriverError(error, `lock status of device ${deviceId}`);
  }
}
