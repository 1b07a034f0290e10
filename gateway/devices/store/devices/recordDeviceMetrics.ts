import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** A device's metrics report as stored (under `metadata.metrics`). */
export interface DeviceMetricsReport {
  disk_usage_percent: number;
  memory_usage_mb: number;
  pending_transactions: number;
  /** Null when the device has never synced. */
  last_sync: string | null;
  network_available: boolean;
  /** When the cloud received the report (ISO 8601). */
  reported_at: string;
}

/**
 * Store a device's metrics report: `metadata.metrics` (replaced as a whole, other metadata
 * untouched, in one statement), `last_seen` = now and `last_sync` as the device reports it
 * (kept when the device reports null: it has never synced).
 * False when there is no such device. Cloud dialects only (jsonb), like the table.
 */
export async function recordDeviceMetrics(
  h: CloudHandle,
  deviceId: string,
  report: DeviceMetricsReport,
  now: Date,
): Promise<boolean> {
  try {
    const r = await h.cloud
      .updateTable('edge_devices')
      .set({
        metadata: sql<string>`jsonb_set(metadata, '{metrics}', CAST(${h.codec.json(report)} AS jsonb))`,
        last_seen: h.codec.time(now),
        // a device that has never synced leaves the cloud's record of its last sync alone
        ...(report.last_sync === null
          ? {}
          : { last_sync: h.codec.time(new Date(report.last_sync)) }),
      })
      .where('device_id', '=', deviceId)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  } catch (error) {
    throw translateDriverError(error, `record metrics of device ${deviceId}`);
  }
}
