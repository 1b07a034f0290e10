/**
 * Credentials the control plane issues to devices: the device secret (the HMAC key of
 * signed requests; stored only sealed), the device's api_key and registration keys (both
 * stored only as SHA-256 — each has 256 bits of entropy, so a fast hash is the right
 * verifier). Prefixes make a leaked value recognisable in logs and secret scanners.
 */
import { createHash, randomBytes } from 'node:crypto';

/** SHA-256 (hex) of a credential, the form in which api keys and registration keys are kept. */
export const credentialHash = (value: string): string =>
  createHash('sha256').update(value).digest('hex');

/** A new device secret: 32 random bytes, base64url. */
export const newDeviceSecret = (): string => randomBytes(32).toString('base64url');

/** A new device api_key: `sdk_` + 32 random bytes, base64url. */
export const newApiKey = (): string => `sdk_${randomBytes(32).toString('base64url')}`;

/** A new registration key: `srk_` + 32 random bytes, base64url. */
export const newRegistrationKey = (): string => `srk_${randomBytes(32).toString('base64url')}`;

/** Shape of a registration key, checked before any lookup. */
export const REGISTRATION_KEY_PATTERN = /^srk_[A-Za-z0-9_-]{43}$/;
