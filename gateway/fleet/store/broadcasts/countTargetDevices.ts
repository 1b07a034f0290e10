import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { deviceFilterCondition, type DeviceTargetFilter } from './deviceFilter.js';

/** How many registered devices match `filter` now. */
export async function countTargetDevices(
  h: CloudHandle,
  filter: DeviceTargetFilter,
): Promise<number> {
  try {
    const result = await sql<{ n: number | string }>`
      SELECT count(*) AS n FROM edge_devices d
      WHERE ${deviceFilterCondition(h.codec, filter)}`.execute(h.db);
    return h.codec.parseInt(result.rows[0]?.n ?? 0);
  } catch (error) {
    throw translateDriverError(error, 'count target devices');
  }
}
