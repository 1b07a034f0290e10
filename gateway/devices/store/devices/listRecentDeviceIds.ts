import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * The ids of at most `limit` registered devices, the most recently seen first (then those
 * never seen, by id): the devices most likely to connect to a gateway that has just started.
 */
export async function listRecentDeviceIds(h: CloudHandle, limit: number): Promise<string[]> {
  if (limit <= 0) return [];
  try {
    const rows = await h.cloud
      .selectFrom('edge_devices')
      .select('device_id')
      // the same order on every dialect: PostgreSQL sorts NULL first when descending
      .orderBy(sql`last_seen IS NULL`)
      .orderBy('last_seen', 'desc')
      .orderBy('device_id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.device_id);
  } catch (error) {
    throw translateDriverError(error, 'list the devices most recently seen');
  }
}
