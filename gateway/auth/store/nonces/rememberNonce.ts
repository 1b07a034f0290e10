import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Record that `deviceId` used `nonce`, valid until `expiresAt`; false when the nonce is
 * already recorded and not yet expired (a replay). One statement, so two gateways racing
 * on the same nonce accept it exactly once. An expired row left by a slow purge counts as
 * absent. Cloud dialects only.
 */
export async function rememberNonce(
  h: CloudHandle,
  deviceId: string,
  nonce: string,
  now: Date,
  expiresAt: Date,
): Promise<boolean> {
  try {
    const row = await h.cloud
      .insertInto('device_request_nonces')
      .values({ device_id: deviceId, nonce, expires_at: h.codec.time(expiresAt) })
      .onConflict((oc) =>
        oc
          .columns(['device_id', 'nonce'])
          .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') }))
          .where('device_request_nonces.expires_at', '<=', h.codec.time(now)),
      )
      .returning('nonce')
      .executeTakeFirst();
    return row !== undefined;
  } catch (error) {
    throw translateDriverError(error, 'remember a device nonce');
  }
}
