import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { DEVICE_COLUMNS, rowToDevice, type DeviceRecord } from './device.js';

/** A device to register; credentials arrive already protected. */
export interface NewDevice {
  deviceId: string;
  deviceName: string;
  deviceType: string;
  location: string;
  firmwareVersion?: string;
  metadata?: Record<string, unknown>;
  /** SHA-256 (hex) of the api_key handed to the device. */
  apiKeyHash: string;
  /** The device secret, sealed by the keyring. */
  secretCiphertext: string;
  registrationKeyId?: string;
}

/** Register a device (status OFFLINE). A taken device id or api_key is a ConflictError. */
export async function insertDevice(
  h: CloudHandle,
  device: NewDevice,
  now: Date,
): Promise<DeviceRecord> {
  try {
    const row = await h.cloud
      .insertInto('edge_devices')
      .values({
        device_id: device.deviceId,
        device_name: device.deviceName,
        device_type: device.deviceType,
        location: device.location,
        firmware_version: device.firmwareVersion ?? null,
        metadata: h.codec.json(device.metadata ?? {}),
        api_key: device.apiKeyHash,
        secret_ciphertext: device.secretCiphertext,
        registration_key: device.registrationKeyId ?? null,
        created_at: h.codec.time(now),
        updated_at: h.codec.time(now),
      })
      .returning(DEVICE_COLUMNS)
      .executeTakeFirstOrThrow();
    return rowToDevice(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `register device ${device.deviceId}`);
  }
}
