import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** A nonce a device used, and when its window ends. */
export interface UsedNonce {
  deviceId: string;
  nonce: string;
  expiresAt: Date;
}

/**
 * Record many nonces in one statement (a gateway's write-behind batch); returns those that
 * were already recorded and not yet expired at `now` — a nonce another gateway accepted
 * first. An expired row left by a slow purge is renewed. `nonces` must not repeat a
 * (device, nonce) pair. Cloud dialects only.
 */
export async function rememberNonces(
  h: CloudHandle,
  nonces: readonly UsedNonce[],
  now: Date,
): Promise<UsedNonce[]> {
  if (nonces.length === 0) return [];
  try {
    const rows = await h.cloud
      .insertInto('device_request_nonces')
      .values(
        nonces.map((n) => ({
          device_id: n.deviceId,
          nonce: n.nonce,
          expires_at: h.codec.time(n.expiresAt),
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['device_id', 'nonce'])
          .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') }))
          .where('device_request_nonces.expires_at', '<=', h.codec.time(now)),
      )
      .returning(['device_id', 'nonce'])
      .execute();
    const recorded = new Set(rows.map((r) => `${r.device_id}\u0000${r.nonce}`));
    return nonces.filter((n) => !recorded.has(`${n.deviceId}\u0000${n.nonce}`));
  } catch (error) {
    throw translateDriverError(error, 'remember a batch of device nonces');
  }
}
