/**
 * Transaction record signatures (docs/architecture.md#security): `signature` = base64url(HMAC-SHA256(device
 * secret, UTF-8 of the RFC 8785 canonical JSON of the record without its `signature`
 * member)). The device signs when it commits the record offline; the cloud verifies before
 * storing it, in constant time, against the device's current secret and — during a
 * rotation's grace period — its previous one.
 *
 * Canonical JSON makes the signature independent of key order and whitespace, so any JSON
 * library on the device can produce the bytes; records are plain JSON (strings, integers,
 * booleans, null, objects, arrays) so number formatting never differs between signer and
 * verifier.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../definition/hash.js';

/** The text a record's signature covers: canonical JSON without `signature`. */
export function recordSigningText(record: Record<string, unknown>): string {
  const { signature: _signature, ...unsigned } = record;
  return canonicalJson(unsigned);
}

/** The signature of `record` (its own `signature` member is ignored) under `secret`. */
export function signTransactionRecord(secret: string, record: Record<string, unknown>): string {
  return signSigningText(secret, recordSigningText(record));
}

/** The signature of a record whose {@link recordSigningText} the caller already has. */
export function signSigningText(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text, 'utf8').digest('base64url');
}

/**
 * Whether `record.signature` is the record's signature under one of `secrets`. Every
 * candidate is computed and compared, so timing tells neither which secret matched nor how
 * much of the signature was right.
 */
export function verifyTransactionRecord(
  secrets: readonly string[],
  record: Record<string, unknown>,
): boolean {
  return verifySigningText(secrets, recordSigningText(record), record.signature);
}

/**
 * {@link verifyTransactionRecord} for a caller that already holds the record's signing text
 * ({@link recordSigningText}) and its `signature` member.
 */
export function verifySigningText(
  secrets: readonly string[],
  text: string,
  signature: unknown,
): boolean {
  const given = typeof signature === 'string' ? Buffer.from(signature) : undefined;
  let valid = false;
  for (const secret of secrets) {
    const expected = Buffer.from(
      createHmac('sha256', secret).update(text, 'utf8').digest('base64url'),
    );
    if (given && given.length === expected.length && timingSafeEqual(given, expected)) valid = true;
  }
  return valid;
}
