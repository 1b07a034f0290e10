import { sql } from 'kysely';
import { executeCached, translateDriverError } from '../../../../runtime/index.js';
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

interface CredentialRow {
  device_id: string;
  secret_ciphertext: string | null;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: unknown;
  open_commands: boolean;
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
  // one statement text for any number of devices: the ids travel as one JSON array, and
  // `= ANY (ARRAY(…))` makes the planner look each up by key (it takes a set-returning
  // function for 100 rows, and would scan the table to join them)
  const parameters = [JSON.stringify([...new Set(deviceIds)])];
  try {
    const { rows } = await executeCached(h, 'getDevicesCredentials', parameters, () => ({
      compile: () =>
        sql<CredentialRow>`
          SELECT d.device_id, d.secret_ciphertext, d.previous_secret_ciphertext,
            d.previous_secret_expires_at,
            EXISTS (SELECT 1 FROM device_commands AS c
              WHERE c.device_id = d.device_id AND c.status IN ('PENDING', 'DELIVERED'))
              AS open_commands
          FROM edge_devices AS d
          WHERE d.device_id = ANY (ARRAY(
            SELECT jsonb_array_elements_text(CAST(${parameters[0]} AS jsonb))))`.compile(h.db),
    }));
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
