/**
 * Device identities of the fleet benchmark: ids by number, and secrets derived from a
 * per-run key (HMAC), so the parent can register 10,000 devices in bulk and the device
 * process can sign as any of them without the secrets crossing the IPC channel.
 */
import { createHmac } from 'node:crypto';

/** The id of device number `n`. */
export function deviceIdOf(n: number): string {
  return `fleet-${String(n).padStart(5, '0')}`;
}

/** The secret of `deviceId` under the run's `key`. */
export function deviceSecretOf(key: string, deviceId: string): string {
  return createHmac('sha256', key).update(deviceId).digest('base64url');
}
