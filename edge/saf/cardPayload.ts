/**
 * The encrypted card payload of a store-and-forward record (docs/architecture.md#security: a PAN is never stored
 * in clear). The device encrypts the workflow's whole `card` object with AES-256-GCM under
 * its card key; the record carries base64 of `iv (12 bytes) | tag (16 bytes) | ciphertext`
 * (runtime/saf/record.ts), which the cloud stores and cannot read — only the holder of the
 * card key (the acquirer's side) can.
 *
 * The workflow id is the additional authenticated data: a payload copied into another
 * record fails to decrypt there, so payloads cannot be swapped between transactions without
 * it showing. The iv is random per payload (a repeated iv under one GCM key would leak the
 * XOR of two plaintexts and the authentication key); ivs are drawn from the system's random
 * source in blocks of 256, each iv taken from a block once.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { canonicalJson, type JsonObject } from '../../runtime/index.js';
import { SafError } from './errors.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Length of an AES-256 key in bytes. */
export const CARD_KEY_BYTES = 32;

/** Throw SAF_KEY_INVALID unless `key` is an AES-256 key. */
export function assertCardKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== CARD_KEY_BYTES)
    throw new SafError(
      'SAF_KEY_INVALID',
      `the card key must be ${CARD_KEY_BYTES} bytes (AES-256-GCM), got ${Buffer.isBuffer(key) ? key.length : typeof key}`,
    );
}

/** Bytes of ivs drawn from the random source at once: 256 ivs, one call per 256 records. */
const IV_POOL_BYTES = IV_BYTES * 256;
let ivPool = Buffer.alloc(0);
let ivAt = 0;

/** A fresh random iv: the next unused bytes of the pool, a new pool once it is spent. */
function nextIv(): Buffer {
  if (ivAt + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_POOL_BYTES);
    ivAt = 0;
  }
  const iv = ivPool.subarray(ivAt, ivAt + IV_BYTES);
  ivAt += IV_BYTES;
  return iv;
}

/** Encrypt `card` (as RFC 8785 canonical JSON) for the record of `workflowId`; base64. */
export function encryptCardPayload(key: Buffer, card: JsonObject, workflowId: string): string {
  assertCardKey(key);
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(workflowId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(canonicalJson(card), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

/**
 * The card object inside `payload` (base64 `iv | tag | ciphertext`) of the record of
 * `workflowId`. Throws SAF_PAYLOAD_INVALID when it does not authenticate under `key`.
 */
export function decryptCardPayload(key: Buffer, payload: string, workflowId: string): JsonObject {
  assertCardKey(key);
  const bytes = Buffer.from(payload, 'base64');
  if (bytes.length <= IV_BYTES + TAG_BYTES)
    throw new SafError('SAF_PAYLOAD_INVALID', 'the card payload is too short');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(workflowId, 'utf8'));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const clear = Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]);
    return JSON.parse(clear.toString('utf8')) as JsonObject;
  } catch (cause) {
    // the cause says only that authentication failed; it holds no plaintext
    throw new SafError(
      'SAF_PAYLOAD_INVALID',
      'the card payload does not decrypt with this key for this workflow',
      { cause },
    );
  }
}
