/** A device registration key as operations return it (never the key or its hash). */
import type { Codec } from '../../../../runtime/index.js';

/** The columns a registration-key read returns. */
export const REGISTRATION_KEY_COLUMNS = [
  'key_id',
  'name',
  'key_prefix',
  'device_type',
  'max_uses',
  'use_count',
  'created_by',
  'created_at',
  'last_used_at',
  'expires_at',
  'revoked_at',
] as const;

/** A registration key. */
export interface RegistrationKeyRecord {
  keyId: string;
  name: string;
  /** The first characters of the key, to recognise it. */
  keyPrefix: string | null;
  /** Devices registering with the key must have this type (null: any). */
  deviceType: string | null;
  /** How many devices may register with the key (null: no limit). */
  maxUses: number | null;
  useCount: number;
  createdBy: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** A row selected with {@link REGISTRATION_KEY_COLUMNS}. */
export interface RegistrationKeyRow {
  key_id: string;
  name: string;
  key_prefix: string | null;
  device_type: string | null;
  max_uses: number | null;
  use_count: number | string;
  created_by: string | null;
  created_at: unknown;
  last_used_at: unknown;
  expires_at: unknown;
  revoked_at: unknown;
}

const time = (codec: Codec, raw: unknown) => (raw === null ? null : codec.parseTime(raw));

/** Decode a registration-key row. */
export function rowToRegistrationKey(codec: Codec, row: RegistrationKeyRow): RegistrationKeyRecord {
  return {
    keyId: row.key_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    deviceType: row.device_type,
    maxUses: row.max_uses,
    useCount: codec.parseInt(row.use_count),
    createdBy: row.created_by,
    createdAt: codec.parseTime(row.created_at),
    lastUsedAt: time(codec, row.last_used_at),
    expiresAt: time(codec, row.expires_at),
    revokedAt: time(codec, row.revoked_at),
  };
}
