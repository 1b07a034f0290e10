/**
 * The device registry record as operations return it: every column of `edge_devices` except
 * the credentials. Secrets (sealed) and the api_key hash are written by registration and
 * rotation and read only by authentication, so no read path here can leak them.
 */
import type { Codec } from '../../../../runtime/index.js';

/** The columns a device read returns (never the credentials). */
export const DEVICE_COLUMNS = [
  'device_id',
  'device_name',
  'device_type',
  'location',
  'registration_key',
  'status',
  'last_sync',
  'last_seen',
  'secret_rotated_at',
  'previous_secret_expires_at',
  'firmware_version',
  'metadata',
  'created_at',
  'updated_at',
] as const;

/** A registered device. */
export interface DeviceRecord {
  deviceId: string;
  deviceName: string | null;
  deviceType: string | null;
  location: string | null;
  /** Id of the registration key the device registered with (null: registered by an admin). */
  registrationKeyId: string | null;
  status: string;
  lastSync: Date | null;
  lastSeen: Date | null;
  secretRotatedAt: Date | null;
  previousSecretExpiresAt: Date | null;
  firmwareVersion: string | null;
  /** Operator metadata; the device's last metrics report is under `metrics`. */
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** A device row as selected with {@link DEVICE_COLUMNS}. */
export interface DeviceRow {
  device_id: string;
  device_name: string | null;
  device_type: string | null;
  location: string | null;
  registration_key: string | null;
  status: string;
  last_sync: unknown;
  last_seen: unknown;
  secret_rotated_at: unknown;
  previous_secret_expires_at: unknown;
  firmware_version: string | null;
  metadata: unknown;
  created_at: unknown;
  updated_at: unknown;
}

const time = (codec: Codec, raw: unknown) => (raw === null ? null : codec.parseTime(raw));

/** Decode a device row. */
export function rowToDevice(codec: Codec, row: DeviceRow): DeviceRecord {
  const metadata = codec.parseJson(row.metadata);
  return {
    deviceId: row.device_id,
    deviceName: row.device_name,
    deviceType: row.device_type,
    location: row.location,
    registrationKeyId: row.registration_key,
    status: row.status,
    lastSync: time(codec, row.last_sync),
    lastSeen: time(codec, row.last_seen),
    secretRotatedAt: time(codec, row.secret_rotated_at),
    previousSecretExpiresAt: time(codec, row.previous_secret_expires_at),
    firmwareVersion: row.firmware_version,
    metadata:
      metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata)
        ? (metadata as Record<string, unknown>)
        : {},
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
  };
}
