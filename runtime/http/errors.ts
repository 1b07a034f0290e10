/**
 * Errors of one HTTP step attempt. Each code has one fixed retry classification, so the
 * engine's retry policy and the audit log agree on whether a failure was transient: a
 * template or URL mistake repeats identically on every attempt, a timeout or 5xx may not.
 */
import { SaffronError } from '../errors.js';

/** Every code an {@link HttpStepError} can carry. */
export const HTTP_STEP_ERROR_CODES = [
  'HTTP_TEMPLATE',
  'HTTP_INVALID_URL',
  'HTTP_INVALID_REQUEST',
  'HTTP_UNREACHABLE',
  'HTTP_TIMEOUT',
  'HTTP_ABORTED',
  'HTTP_SERVER_ERROR',
  'HTTP_RESPONSE_TOO_LARGE',
  'HTTP_DESTINATION_REFUSED',
  'SECRET_DESTINATION_REFUSED',
] as const;
/** One of {@link HTTP_STEP_ERROR_CODES}. */
export type HttpStepErrorCode = (typeof HTTP_STEP_ERROR_CODES)[number];

const RETRYABLE: Readonly<Record<HttpStepErrorCode, boolean>> = {
  HTTP_TEMPLATE: false,
  HTTP_INVALID_URL: false,
  HTTP_INVALID_REQUEST: false,
  HTTP_UNREACHABLE: true,
  HTTP_TIMEOUT: true,
  HTTP_ABORTED: true,
  HTTP_SERVER_ERROR: true,
  HTTP_RESPONSE_TOO_LARGE: false,
  HTTP_DESTINATION_REFUSED: false,
  SECRET_DESTINATION_REFUSED: false,
};

/**
 * One HTTP step attempt failed. Codes and whether a retry can help (`retryable`):
 *
 * - `HTTP_TEMPLATE` (no): rendering `url`, `headers`, `query_params` or `body` failed.
 * - `HTTP_INVALID_URL` (no): not a URL, not `http:`/`https:`, or has credentials in it.
 * - `HTTP_INVALID_REQUEST` (no): a header name or value, or the body, cannot be sent.
 * - `HTTP_UNREACHABLE` (yes): DNS, connect, TLS or a connection reset.
 * - `HTTP_TIMEOUT` (yes): `http_config.timeout` elapsed before the response was read.
 * - `HTTP_ABORTED` (yes): the caller's signal aborted the attempt (e.g. shutdown).
 * - `HTTP_SERVER_ERROR` (yes): a 5xx; `details` hold `status_code` and `body_preview`.
 * - `HTTP_RESPONSE_TOO_LARGE` (no): the response body exceeded the read limit.
 * - `HTTP_DESTINATION_REFUSED` (no): the host is, or resolves to, a loopback, link-local,
 *   private or otherwise non-public address the operator did not allow, or this machine's
 *   own local API; nothing was sent.
 * - `SECRET_DESTINATION_REFUSED` (no): the request uses a secret whose declared hosts do not
 *   include the destination; `details` name the secret and the host. Nothing was sent.
 *
 * Messages, details and `cause` never contain secret values (they are replaced by
 * `[REDACTED]`) nor request headers.
 */
export class HttpStepError extends SaffronError {
  override readonly name = 'HttpStepError';
  declare readonly code: HttpStepErrorCode;

  constructor(
    code: HttpStepErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, { ...options, retryable: RETRYABLE[code] });
  }
}
