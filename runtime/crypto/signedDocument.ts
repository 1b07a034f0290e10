/**
 * Signed documents: what the cloud sends a device as configuration (device config, fraud
 * rules), and how the device checks it before loading (spec: Authentication 4; docs/architecture.md#security).
 *
 * A document is a JSON object with a `type`, a `checksum` and a `signature`:
 * - `checksum` = SHA-256 (hex) of the canonical JSON (RFC 8785) of the document's content
 *   member — `config` for `saffron.device-config.v1`, `rules` for `saffron.fraud-rules.v1`.
 *   A mismatch means the content was corrupted (CONFIG_CORRUPTED).
 * - `signature` = Ed25519 (RFC 8032), base64, over the UTF-8 bytes of the canonical JSON of
 *   the whole document without its `signature` member. A failure means the document was
 *   altered or not issued by the cloud (CONFIG_TAMPERED).
 * - The HTTP ETag is `"` + SHA-256 (hex) of those same signed bytes + `"`. Ed25519 signatures
 *   are deterministic, so the ETag identifies the complete document, and the server can
 *   answer `If-None-Match` without signing anything.
 *
 * Checking the checksum first tells a corrupted download from a forged one; both are checked
 * against the whole canonical form, so key order and whitespace never matter.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../definition/hash.js';
import { verifyEd25519 } from './ed25519.js';

/** Document types and the member each one's checksum covers. */
export const SIGNED_DOCUMENT_TYPES = {
  'saffron.device-config.v1': 'config',
  'saffron.fraud-rules.v1': 'rules',
  /** One published layer, as stored (device_configs.signature). */
  'saffron.config-layer.v1': 'config',
} as const;
/** A signed document's `type`. */
export type SignedDocumentType = keyof typeof SIGNED_DOCUMENT_TYPES;

/**
 * The name the device configuration goes by on both tiers: the cloud's
 * `device_configs.config_name` of its layers, the terminal's `device_config_cache` entry.
 */
export const DEVICE_CONFIG_NAME = 'device';

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The checksum of a content member: SHA-256 (hex) of its canonical JSON. */
export function contentChecksum(content: unknown): string {
  return sha256Hex(canonicalJson(content));
}

/** The exact text a document's signature covers: canonical JSON without `signature`. */
export function signedText(document: Record<string, unknown>): string {
  const { signature: _signature, ...unsigned } = document;
  return canonicalJson(unsigned);
}

/** The strong ETag of a document (given with or without its signature). */
export function documentEtag(document: Record<string, unknown>): string {
  return `"${sha256Hex(signedText(document))}"`;
}

/** Outcome of {@link verifySignedDocument}. */
export type DocumentVerification =
  | { ok: true }
  | {
      ok: false;
      code: 'CONFIG_MALFORMED' | 'CONFIG_CORRUPTED' | 'CONFIG_TAMPERED';
      message: string;
    };

/**
 * Check a document the cloud signed: shape, then checksum (corruption), then the Ed25519
 * signature against the cloud's public key (tampering). Schema validation of the content is
 * the caller's next step.
 */
export function verifySignedDocument(
  document: unknown,
  publicKeyPem: string,
): DocumentVerification {
  if (document === null || typeof document !== 'object' || Array.isArray(document))
    return { ok: false, code: 'CONFIG_MALFORMED', message: 'the document is not a JSON object' };
  const doc = document as Record<string, unknown>;
  const type = doc.type;
  if (typeof type !== 'string' || !Object.hasOwn(SIGNED_DOCUMENT_TYPES, type))
    return { ok: false, code: 'CONFIG_MALFORMED', message: `unknown document type` };
  if (typeof doc.checksum !== 'string' || typeof doc.signature !== 'string')
    return { ok: false, code: 'CONFIG_MALFORMED', message: 'checksum or signature missing' };
  const member = SIGNED_DOCUMENT_TYPES[type as SignedDocumentType];
  if (contentChecksum(doc[member]) !== doc.checksum)
    return {
      ok: false,
      code: 'CONFIG_CORRUPTED',
      message: `the checksum of '${member}' does not match`,
    };
  const valid = verifyEd25519(signedText(doc), doc.signature, publicKeyPem);
  return valid
    ? { ok: true }
    : { ok: false, code: 'CONFIG_TAMPERED', message: 'the signature does not verify' };
}
