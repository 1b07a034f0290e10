import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  REGISTRATION_KEY_COLUMNS,
  rowToRegistrationKey,
  type RegistrationKeyRecord,
} from './registrationKey.js';

/** Every registration key, newest first (revoked and expired ones included). */
export async function listRegistrationKeys(h: CloudHandle): Promise<RegistrationKeyRecord[]> {
  try {
    const rows = await h.cloud
      .selectFrom('registration_keys')
      .select(REGISTRATION_KEY_COLUMNS)
      .orderBy('created_at', 'desc')
      .orderBy('key_id')
      .execute();
    return rows.map((row) => rowToRegistrationKey(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list registration keys');
  }
}
