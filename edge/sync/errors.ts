/**
 * Why a store-and-forward upload round did not finish. The uploader never throws these at
 * its caller — `syncNow()` reports them in its result and the background loop backs off —
 * but the codes are stable so the agent's status, its logs and a SYNC_TRANSACTIONS ack can
 * tell a network outage (wait) from a refused device (call an operator).
 */
import { SaffronError } from '../../runtime/index.js';

/** Every code a {@link SafSyncError} can carry. */
export const SAF_SYNC_ERROR_CODES = [
  'SAF_UPLOAD_FAILED',
  'SAF_UPLOAD_REFUSED',
  'SAF_UPLOAD_BAD_RESPONSE',
  'SAF_UPLOAD_NO_PROGRESS',
  'SAF_SYNC_STOPPED',
] as const;
/** One of {@link SAF_SYNC_ERROR_CODES}. */
export type SafSyncErrorCode = (typeof SAF_SYNC_ERROR_CODES)[number];

/**
 * An upload round that stopped early.
 *
 * - `SAF_UPLOAD_FAILED`: no answer (network error, timeout); retryable.
 * - `SAF_UPLOAD_REFUSED`: the cloud answered the whole batch with an HTTP error
 *   (`details.status`, `details.cloudCode`); retryable for 5xx and 429.
 * - `SAF_UPLOAD_BAD_RESPONSE`: a 2xx answer that is not the batch response; retryable.
 * - `SAF_UPLOAD_NO_PROGRESS`: the cloud answered but neither accepted nor rejected any
 *   record sent; retryable.
 * - `SAF_SYNC_STOPPED`: the uploader was stopped while a request was in flight.
 */
export class SafSyncError extends SaffronError {
  override readonly name = 'SafSyncError';
  declare readonly code: SafSyncErrorCode;
  /** How long the cloud asked to wait (Retry-After), when it did. */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: SafSyncErrorCode,
    message: string,
    options: {
      cause?: unknown;
      details?: Record<string, unknown>;
      retryable?: boolean;
      retryAfterMs?: number;
    } = {},
  ) {
    super(code, message, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}
