/**
 * Content addresses of WebAssembly binaries: the lowercase hex SHA-256 of the bytes (spec:
 * `binary_hash`). Comparisons run in constant time, so how long a check takes says nothing
 * about how much of a forged digest was right.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** Whether `value` is a SHA-256 digest as 64 lowercase hex characters. */
export function isSha256Hex(value: string): boolean {
  return HEX_SHA256.test(value);
}

/** The lowercase hex SHA-256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Whether `bytes` hash to `expectedHex`, compared in constant time. A malformed expected
 * digest never matches.
 */
export function hashMatches(bytes: Uint8Array, expectedHex: string): boolean {
  const expected = Buffer.from(expectedHex, 'hex');
  // Buffer.from stops at the first non-hex pair; a round trip proves it read all 64 chars.
  if (expected.length !== 32 || expected.toString('hex') !== expectedHex) return false;
  const actual = createHash('sha256').update(bytes).digest();
  return timingSafeEqual(actual, expected);
}
