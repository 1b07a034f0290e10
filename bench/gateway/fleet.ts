/**
 * The benchmark's devices: ids by number and secrets derived from one benchmark key, so the
 * parent (which registers them in bulk, sealed) and every client process (which signs as
 * them) agree without shipping 15,000 secrets around. Devices open their sockets as the edge
 * agent does: a nonce-less signed upgrade, then a hello answering the gateway's challenge.
 */
import { createHmac } from 'node:crypto';
import { deviceUpgradeHeaders, signSocketProof } from '../../runtime/crypto/index.js';

/** The id of device number `n`. */
export const deviceIdOf = (n: number): string => `bench-dev-${n}`;

/** The secret of `deviceId` under `benchKey`. */
export const deviceSecretOf = (benchKey: string, deviceId: string): string =>
  createHmac('sha256', benchKey).update(deviceId).digest('base64url');

/** The WebSocket URL of `deviceId`'s socket on the gateway at `base` (http://…). */
export const socketPathOf = (deviceId: string): string => `/api/v1/devices/${deviceId}/ws`;

/** `base` with ws: instead of http:. */
export const wsBase = (base: string): string => base.replace(/^http/, 'ws');

/** The signed upgrade headers of `deviceId`'s socket (no nonce: the gateway challenges it). */
export const upgradeHeaders = (deviceId: string, secret: string): Record<string, string> =>
  deviceUpgradeHeaders(deviceId, secret, { pathWithQuery: socketPathOf(deviceId) });

/**
 * The device's `hello` when `text` is the gateway's challenge frame (with the proof, as the
 * edge agent sends it), else undefined.
 */
export function helloAnswering(deviceId: string, secret: string, text: string): string | undefined {
  if (!text.includes('"challenge"')) return undefined;
  const frame = JSON.parse(text) as { type?: unknown; challenge?: unknown };
  if (frame.type !== 'challenge' || typeof frame.challenge !== 'string') return undefined;
  return JSON.stringify({
    type: 'hello',
    proof: signSocketProof(secret, deviceId, frame.challenge),
  });
}
