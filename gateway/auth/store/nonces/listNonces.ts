import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import type { UsedNonce } from './rememberNonces.js';

/**
 * Every nonce still within its window at `now` (a gateway loads them when it starts or
 * regains its notification connection, so it knows what other gateways accepted before).
 */
export async function listNonces(h: CloudHandle, now: Date): Promise<UsedNonce[]> {
  try {
    const rows = await h.cloud
      .selectFrom('device_request_nonces')
      .select(['device_id', 'nonce', 'expires_at'])
      .where('expires_at', '>', h.codec.time(now))
      .orderBy('expires_at')
      .execute();
    return rows.map((r) => ({
      deviceId: r.device_id,
      nonce: r.nonce,
      expiresAt: h.codec.parseTime(r.expires_at),
    }));
  } catch (error) {
    throw translateDriverError(error, 'list device nonces');
  }
}
