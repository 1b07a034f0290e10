import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Use a registration key once: counts the use if the key is known, not revoked, not expired
 * and not used up, in one conditional UPDATE (concurrent registrations cannot exceed
 * `max_uses`). Run it in the transaction that inserts the device, so a failed registration
 * gives the use back. Undefined when the key cannot be used.
 */
export async function consumeRegistrationKey(
  h: CloudHandle,
  keyHash: string,
  now: Date,
): Promise<{ keyId: string; deviceType: string | null } | undefined> {
  const at = h.codec.time(now);
  try {
    const row = await h.cloud
      .updateTable('registration_keys')
      .set({ use_count: sql<number>`use_count + 1`, last_used_at: at })
      .where('key_hash', '=', keyHash)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
      .where((eb) => eb.or([eb('max_uses', 'is', null), eb('use_count', '<', eb.ref('max_uses'))]))
      .returning(['key_id', 'device_type'])
      .executeTakeFirst();
    return row && { keyId: row.key_id, deviceType: row.device_type };
  } catch (error) {
    throw translateDriverError(error, 'use registration key');
  }
}
