/**
 * Why the device could not record, read or limit a store-and-forward transaction. Kept
 * apart from the cloud's rejection codes (gateway/routes/transactions.ts): these stop a
 * record before it exists on the device, while the cloud's describe a record it refused.
 * A card the workflow did not tokenize and a record too large to upload are the workflow
 * author's to fix; a wrong card key is the installer's — different people, different codes.
 */
import { SaffronError } from '../../runtime/index.js';

/** Every code a {@link SafError} can carry. */
export const SAF_ERROR_CODES = [
  'SAF_KEY_INVALID',
  'SAF_CARD_INVALID',
  'SAF_RECORD_INVALID',
  'SAF_RECORD_TOO_LARGE',
  'SAF_PAYLOAD_INVALID',
  'SAF_LIMITS_INVALID',
] as const;
/** One of {@link SAF_ERROR_CODES}. */
export type SafErrorCode = (typeof SAF_ERROR_CODES)[number];

/**
 * A store-and-forward problem on the device. None is retryable: repeating the same call
 * with the same workflow, key or configuration fails the same way.
 *
 * - `SAF_KEY_INVALID`: the card key is not 32 bytes (AES-256), or the device secret is empty.
 * - `SAF_CARD_INVALID`: the workflow state has a `card` that is not tokenized (no `token`,
 *   no four-digit `last4`, or a token that looks like a card number), or one too large to
 *   encrypt into a record. The terminal commit fails: a payment whose record could not be
 *   settled is not approved.
 * - `SAF_RECORD_INVALID`: the record built from the workflow fails the shared record schema
 *   (`details.issues` lists `{path, message}`).
 * - `SAF_RECORD_TOO_LARGE`: the record is over the cloud's per-record limit.
 * - `SAF_PAYLOAD_INVALID`: an encrypted card payload does not decrypt with the key given
 *   (wrong key, wrong workflow, or altered bytes).
 * - `SAF_LIMITS_INVALID`: the `store_and_forward` section of the device configuration is
 *   malformed (`details.issues` lists `{path, message}`).
 */
export class SafError extends SaffronError {
  override readonly name = 'SafError';
  declare readonly code: SafErrorCode;

  constructor(
    code: SafErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, { ...options, retryable: false });
  }
}
