import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Delete up to `limit` nonces that expired before `now`; returns how many went. Bounded so a
 * purge after a long pause never holds locks for long; call again while it returns `limit`.
 */
export async function purgeNonces(h: CloudHandle, now: Date, limit = 10_000): Promise<number> {
  try {
    const result = await h.cloud
      .deleteFrom('device_request_nonces')
      .where(
        sql<string>`(device_id, nonce)`,
        'in',
        h.cloud
          .selectFrom('device_request_nonces')
          .select(['device_id', 'nonce'])
          .where('expires_at', '<', h.codec.time(now))
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  } catch (error) {
    throw translateDriverError(error, 'purge expired device nonces');
  }
}
