import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** Revoke a registration key (devices that registered with it keep working); false when unknown. */
export async function revokeRegistrationKey(
  h: CloudHandle,
  keyId: string,
  now: Date,
): Promise<boolean> {
  try {
    const r = await h.cloud
      .updateTable('registration_keys')
      .set({ revoked_at: h.codec.time(now) })
      .where('key_id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (r.numUpdatedRows > 0n) return true;
    // already revoked is still "known"
    const row = await h.cloud
      .selectFrom('registration_keys')
      .select('key_id')
      .where('key_id', '=', keyId)
      .executeTakeFirst();
    return row !== undefined;
  } catch (error) {
    throw translateDriverError(error, `revoke registration key ${keyId}`);
  }
}
