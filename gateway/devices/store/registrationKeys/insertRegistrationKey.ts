import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  REGISTRATION_KEY_COLUMNS,
  rowToRegistrationKey,
  type RegistrationKeyRecord,
} from './registrationKey.js';

/** A registration key to store; the key itself arrives hashed. */
export interface NewRegistrationKey {
  keyId: string;
  name: string;
  /** SHA-256 (hex) of the key. */
  keyHash: string;
  keyPrefix: string;
  deviceType?: string;
  maxUses?: number;
  expiresAt?: Date;
  createdBy?: string;
}

/** Store a new registration key. */
export async function insertRegistrationKey(
  h: CloudHandle,
  key: NewRegistrationKey,
  now: Date,
): Promise<RegistrationKeyRecord> {
  try {
    const row = await h.cloud
      .insertInto('registration_keys')
      .values({
        key_id: key.keyId,
        name: key.name,
        key_hash: key.keyHash,
        key_prefix: key.keyPrefix,
        device_type: key.deviceType ?? null,
        max_uses: key.maxUses ?? null,
        expires_at: key.expiresAt ? h.codec.time(key.expiresAt) : null,
        created_by: key.createdBy ?? null,
        created_at: h.codec.time(now),
      })
      .returning(REGISTRATION_KEY_COLUMNS)
      .executeTakeFirstOrThrow();
    return rowToRegistrationKey(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create registration key ${key.name}`);
  }
}
