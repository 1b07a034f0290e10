import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** What authentication reads of a device: its sealed secrets. */
export interface SealedDeviceCredentials {
  secretCiphertext: string | null;
  /** The secret before the last rotation, valid until `previousExpiresAt`. */
  previousSecretCiphertext: string | null;
  previousExpiresAt: Date | null;
}

/** The sealed credentials of `deviceId`, or undefined when there is no such device. */
export async function getDeviceCredentials(
  h: StoreHandle,
  deviceId: string,
): Promise<SealedDeviceCredentials | undefined> {
  try {
    const row = await h.db
      .selectFrom('edge_devices')
      .select(['secret_ciphertext', 'previous_secret_ciphertext', 'previous_secret_expires_at'])
      .where('device_id', '=', deviceId)
      .executeTakeFirst();
    return (
      row && {
        secretCiphertext: row.secret_ciphertext,
        previousSecretCiphertext: row.previous_secret_ciphertext,
        previousExpiresAt:
          row.previous_secret_expires_at === null
            ? null
            : h.codec.parseTime(row.previous_secret_expires_at),
      }
    );
  } catch (error) {
    throw translateDriverError(error, `read the credentials of device ${deviceId}`);
  }
}
