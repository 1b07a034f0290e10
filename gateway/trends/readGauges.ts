/**
 * Read the fleet gauges from `edge_devices`: how many devices are connected (ONLINE or
 * SYNCING) and the sum of the SAF backlogs they last reported (`metadata.metrics
 * .pending_transactions`, written by `POST /api/v1/devices/{id}/metrics`). One statement
 * over the device table, which every gateway shares, so every gateway reads the same fleet.
 */
import { sql } from 'kysely';
import type { CloudStore } from '../../runtime/index.js';
import type { GaugeSample } from './gaugeRing.js';

/** The fleet gauges at `at`. */
export async function readGauges(store: CloudStore, at: Date): Promise<GaugeSample> {
  const result = await sql<{ online: string | number; backlog: string | number | null }>`
    SELECT count(*) FILTER (WHERE status IN ('ONLINE', 'SYNCING')) AS online,
           sum(CASE WHEN jsonb_typeof(metadata -> 'metrics' -> 'pending_transactions') = 'number'
                    THEN (metadata -> 'metrics' ->> 'pending_transactions')::numeric END) AS backlog
      FROM edge_devices`.execute(store.db);
  const row = result.rows[0];
  return {
    at: at.getTime(),
    devicesOnline: Number(row?.online ?? 0),
    safBacklog: Number(row?.backlog ?? 0),
  };
}
