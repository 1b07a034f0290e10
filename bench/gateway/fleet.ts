/**
 * The benchmark's devices: ids by number and secrets derived from one benchmark key, so the
 * parent (which registers them in bulk, sealed) and every client process (which signs as
 * them) agree without shipping 15,000 secrets around.
 */
import { createHmac } from 'node:crypto';

/** The id of device number `n`. */
export const deviceIdOf = (n: number): string => `bench-dev-${n}`;

/** The secret of `deviceId` under `benchKey`. */
export const deviceSecretOf = (benchKey: string, deviceId: string): string =>
  createHmac('sha256', benchKey).update(deviceId).digest('base64url');

/** The WebSocket URL of `deviceId`'s socket on the gateway at `base` (http://…). */
export const socketPathOf = (deviceId: string): string => `/api/v1/devices/${deviceId}/ws`;

/** `base` with ws: instead of http:. */
export const wsBase = (base: string): string => base.replace(/^http/, 'ws');
