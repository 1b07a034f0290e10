/**
 * Write many devices' status, actor snapshot and `last_seen` in one statement — the batch
 * form of saveDeviceStatus.ts, for the presence writer. Rows travel as one JSON parameter
 * (`jsonb_to_recordset`), so the text is the same for any number of devices. A field a row
 * leaves out keeps the stored value; `last_seen` never moves back.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** One device's change; at least one of the optional parts is given. */
export interface DeviceStatusRow {
  deviceId: string;
  /** The new status and actor snapshot (kept under `metadata.actor`); absent leaves both. */
  state?: { status: string; actor: unknown };
  /** A sign of life: `last_seen` moves here unless it is later already. */
  lastSeen?: Date;
}

/** Apply `rows` to `edge_devices` (one statement; nothing when `rows` is empty). */
export async function saveDeviceStatuses(
  h: CloudHandle,
  rows: readonly DeviceStatusRow[],
): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((r) => ({
    device_id: r.deviceId,
    status: r.state?.status ?? null,
    actor: r.state ? r.state.actor : null,
    last_seen: r.lastSeen ? h.codec.time(r.lastSeen) : null,
  }));
  try {
    await sql`
      UPDATE edge_devices AS d SET
        status = COALESCE(v.status, d.status),
        metadata = CASE WHEN v.status IS NULL THEN d.metadata
          ELSE jsonb_set(COALESCE(d.metadata, '{}'::jsonb), '{actor}', v.actor) END,
        last_seen = GREATEST(d.last_seen, v.last_seen)
      FROM jsonb_to_recordset(CAST(${JSON.stringify(values)} AS jsonb))
        AS v(device_id text, status text, actor jsonb, last_seen timestamptz)
      WHERE d.device_id = v.device_id`.execute(h.db);
  } catch (error) {
    throw translateDriverError(error, `save status of ${rows.length} device(s)`);
  }
}
