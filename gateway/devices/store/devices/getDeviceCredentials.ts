import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** What authentication reads of a device: its sealed secrets. */
export interface SealedDeviceCredentials {
  /** Whether it had a PENDING or DELIVERED command (a socket's hello would resume them). */
  openCommands: boolean;
  secretCiphertext: string | null;
  /** The secret before the last rotation, valid until `previousExpiresAt`. */
  previousSecretCiphertext: string | null;
  previousExpiresAt: Date | null;
}

/**
 * The sealed credentials of each of `deviceIds` that exists, in one statement (a gateway
 * that starts cold reads the devices connecting at the same moment together).
 */
export async function getDevicesCredentials(
  h: CloudHandle,
  deviceIds: readonly string[],
): Promise<Map<string, SealedDeviceCredentials>> {
  const found = new Map<string, SealedDeviceCredentials>();
  if (deviceIds.length === 0) return found;
  try {
    const rows = await h.cloud
      .selectFrom('edge_devices')
      .select([
        'device_id',
        'secret_ciphertext',
        'previous_secret_ciphertext',
        'previous_secret_expires_at',
        (eb) =>
          eb
            .exists(
              eb
                .selectFrom('device_commands as c')
                .select(sql<number>`1`.as('one'))
                .whereRef('c.device_id', '=', 'edge_devices.device_id')
                .where('c.status', 'in', ['PENDING', 'DELIVERED']),
            )
            .as('open_commands'),
      ])
      .where('device_id', 'in', [...new Set(deviceIds)])
      .execute();
    for (const row of rows)
      found.set(row.device_id, {
        openCommands: Boolean(row.open_commands),
        secretCiphertext: row.secret_ciphertext,
        previousSecretCiphertext: row.previous_secret_ciphertext,
        previousExpiresAt:
          row.previous_secret_expires_at === null
            ? null
            : h.codec.parseTime(row.previous_secret_expires_at),
      });
    return found;
  } catch (error) {
    throw translateDriverError(
      error,
      deviceIds.length === 1
        ? `read the credentials of device ${deviceIds[0]}`
        : `read the credentials of ${deviceIds.length} devices`,
    );
  }
}
