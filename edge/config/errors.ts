/**
 * Why the device refused a configuration document or could not get one. The codes tell an
 * operator reading the agent's status (or the cloud reading an UPDATE_CONFIG ack) a flipped
 * bit on the wire (CONFIG_CORRUPTED) from a forged or altered document (CONFIG_TAMPERED)
 * from a cloud that sent something this agent does not understand (CONFIG_SCHEMA_INVALID)
 * — three very different incidents that a bare "invalid config" would merge.
 */
import { SaffronError } from '../../runtime/index.js';

/** Every code a {@link ConfigError} can carry. */
export const CONFIG_ERROR_CODES = [
  'CONFIG_MALFORMED',
  'CONFIG_CORRUPTED',
  'CONFIG_TAMPERED',
  'CONFIG_SCHEMA_INVALID',
  'CONFIG_DEVICE_MISMATCH',
  'CONFIG_FETCH_FAILED',
  'CONFIG_APPLY_FAILED',
  'CONFIG_PUBLIC_KEY_INVALID',
  'CONFIG_PUBLIC_KEY_UNAVAILABLE',
  'CONFIG_PUBLIC_KEY_MISMATCH',
  'DEFINITION_SIGNATURE_INVALID',
  'CLOUD_URL_INSECURE',
] as const;
/** One of {@link CONFIG_ERROR_CODES}. */
export type ConfigErrorCode = (typeof CONFIG_ERROR_CODES)[number];

/** Codes that reject a document: the last good configuration stays loaded. */
export const CONFIG_REJECTION_CODES = [
  'CONFIG_MALFORMED',
  'CONFIG_CORRUPTED',
  'CONFIG_TAMPERED',
  'CONFIG_SCHEMA_INVALID',
  'CONFIG_DEVICE_MISMATCH',
  'DEFINITION_SIGNATURE_INVALID',
] as const satisfies readonly ConfigErrorCode[];
/** One of {@link CONFIG_REJECTION_CODES}. */
export type ConfigRejectionCode = (typeof CONFIG_REJECTION_CODES)[number];

/**
 * A configuration problem on the device.
 *
 * - `CONFIG_MALFORMED`: not a JSON object, unknown `type`, checksum or signature missing.
 * - `CONFIG_CORRUPTED`: the checksum does not match the content (damaged in transit or at rest).
 * - `CONFIG_TAMPERED`: the Ed25519 signature does not verify against the pinned cloud key.
 * - `CONFIG_SCHEMA_INVALID`: signed, but not the document expected here or not a valid one
 *   (`details.issues` lists `{path, message}`).
 * - `CONFIG_DEVICE_MISMATCH`: a valid document issued for another device.
 * - `CONFIG_FETCH_FAILED`: the cloud could not be asked (network, HTTP error); retryable.
 * - `CONFIG_APPLY_FAILED`: verified and stored, but the agent's hot-reload threw; retried.
 * - `CONFIG_PUBLIC_KEY_INVALID` / `CONFIG_PUBLIC_KEY_UNAVAILABLE`: the cloud key to pin is
 *   not an Ed25519 public key / could not be fetched (retryable).
 * - `CONFIG_PUBLIC_KEY_MISMATCH`: the provisioned key is not the one this device pinned from
 *   the cloud on first use; the agent does not start (pinPublicKey.ts).
 * - `DEFINITION_SIGNATURE_INVALID`: a workflow definition of the configuration is not signed
 *   by the cloud (or was altered); the whole document is refused.
 * - `CLOUD_URL_INSECURE`: the cloud URL is not HTTPS and not loopback, and plain HTTP was
 *   not explicitly allowed (cloudUrlPolicy.ts).
 */
export class ConfigError extends SaffronError {
  override readonly name = 'ConfigError';
  declare readonly code: ConfigErrorCode;

  constructor(
    code: ConfigErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown>; retryable?: boolean } = {},
  ) {
    super(code, message, options);
  }
}

/** Whether `code` rejects a document (as opposed to failing to fetch or apply it). */
export function isRejectionCode(code: string): code is ConfigRejectionCode {
  return (CONFIG_REJECTION_CODES as readonly string[]).includes(code);
}
