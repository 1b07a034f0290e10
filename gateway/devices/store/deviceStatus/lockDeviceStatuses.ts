/**
 * Read many devices' status, actor snapshot and `last_seen` with their rows locked until the
 * transaction ends — the batch form of lockDeviceStatus.ts, for the presence writer.
 *
 * The rows are locked by one statement in `device_id` order (the lock is taken as the sorted
 * rows are returned): two gateways flushing overlapping sets of devices then wait for each
 * other instead of deadlocking, and a one-device status change (which locks one row) fits
 * the same order. The ids travel as one JSON parameter, so the statement's text is the same
 * for any number of devices.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import type { LockedDeviceStatus } from './lockDeviceStatus.js';

/** A device's stored status, actor snapshot (raw JSON, or null) and last sign of life. */
export interface LockedDevicePresence extends LockedDeviceStatus {
  lastSeen: Date | null;
}

/**
 * Lock the rows of `deviceIds` (in id order) and read them; devices that do not exist are
 * absent from the result.
 */
export async function lockDeviceStatuses(
  h: CloudHandle,
  deviceIds: readonly string[],
): Promise<Map<string, LockedDevicePresence>> {
  const locked = new Map<string, LockedDevicePresence>();
  if (deviceIds.length === 0) return locked;
  try {
    const result = await sql<{
      device_id: string;
      status: string;
      actor: unknown;
      last_seen: unknown;
    }>`
      SELECT d.device_id, d.status, d.metadata -> 'actor' AS actor, d.last_seen
      FROM edge_devices AS d
      WHERE d.device_id IN (
        SELECT jsonb_array_elements_text(CAST(${JSON.stringify(deviceIds)} AS jsonb)))
      ORDER BY d.device_id
      FOR UPDATE OF d`.execute(h.db);
    for (const row of result.rows)
      locked.set(row.device_id, {
        status: row.status,
        actor: h.codec.parseJson(row.actor) ?? null,
        lastSeen: row.last_seen === null ? null : h.codec.parseTime(row.last_seen),
      });
    return locked;
  } catch (error) {
    throw translateDriverError(error, `lock status of ${deviceIds.length} device(s)`);
  }
}
