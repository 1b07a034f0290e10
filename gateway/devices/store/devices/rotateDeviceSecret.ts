import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** A secret rotation: the new sealed secret replaces `expected`, which stays valid until `previousExpiresAt`. */
export interface SecretRotation {
  deviceId: string;
  /** The sealed secret the caller read; the swap happens only if it is still current. */
  expected: string;
  next: string;
  previousExpiresAt: Date;
}

/** The device's current sealed secret, or undefined when there is no such device. */
export async function getDeviceSecret(
  h: CloudHandle,
  deviceId: string,
): Promise<{ secretCiphertext: string | null } | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('edge_devices')
      .select('secret_ciphertext')
      .where('device_id', '=', deviceId)
      .executeTakeFirst();
    return row && { secretCiphertext: row.secret_ciphertext };
  } catch (error) {
    throw translateDriverError(error, `read device ${deviceId}`);
  }
}

/**
 * Replace a device's secret, keeping the old one as the previous secret (one previous secret
 * at a time: rotating again drops the older one). Compare-and-swap on the sealed value, so
 * of two concurrent rotations exactly one wins; false for the loser (or no such device).
 */
export async function rotateDeviceSecret(
  h: CloudHandle,
  rotation: SecretRotation,
  now: Date,
): Promise<boolean> {
  try {
    const r = await h.cloud
      .updateTable('edge_devices')
      .set({
        secret_ciphertext: rotation.next,
        previous_secret_ciphertext: rotation.expected,
        previous_secret_expires_at: h.codec.time(rotation.previousExpiresAt),
        secret_rotated_at: h.codec.time(now),
        updated_at: h.codec.time(now),
      })
      .where('device_id', '=', rotation.deviceId)
      .where('secret_ciphertext', '=', rotation.expected)
      .executeTakeFirst();
    return r.numUpdatedRows > 0n;
  } catch (error) {
    throw translateDriverError(error, `rotate the secret of device ${rotation.deviceId}`);
  }
}
