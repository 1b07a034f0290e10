/**
 * The secrets a device may currently sign with: its current one and, during a rotation's
 * grace period, its previous one. Used where the gateway checks signatures other than the
 * request's own (SAF transaction records). Never logged, never returned.
 */
import type { Store } from '../../runtime/index.js';
import type { Keyring } from '../keys.js';

/** The usable secrets of `deviceId` at `now` (empty when the device is unknown). */
export async function deviceSecrets(
  store: Store,
  keys: Keyring,
  deviceId: string,
  now: Date,
): Promise<string[]> {
  const device = await store.db
    .selectFrom('edge_devices')
    .select(['secret_ciphertext', 'previous_secret_ciphertext', 'previous_secret_expires_at'])
    .where('device_id', '=', deviceId)
    .executeTakeFirst();
  const secrets: string[] = [];
  if (device?.secret_ciphertext) secrets.push(keys.open(device.secret_ciphertext));
  if (
    device?.previous_secret_ciphertext &&
    device.previous_secret_expires_at !== null &&
    store.codec.parseTime(device.previous_secret_expires_at).getTime() > now.getTime()
  )
    secrets.push(keys.open(device.previous_secret_ciphertext));
  return secrets;
}
