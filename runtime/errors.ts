/**
 * Error model shared by every Saffron module.
 *
 * Every error Saffron throws on purpose is a {@link SaffronError}: it carries a stable string
 * `code` (never a number, never a message to match on), a `retryable` flag that tells callers
 * whether repeating the same call can succeed, and the original error as `cause`. `name` is set
 * explicitly on each class so `instanceof`-free checks (`err.name === 'ConflictError'`) work
 * across bundles, module copies and worker threads.
 */

/** Options accepted by every {@link SaffronError} constructor. */
export interface SaffronErrorOptions {
  /** The underlying error, kept for diagnostics. */
  cause?: unknown;
  /** Whether repeating the failed call may succeed. Defaults per class. */
  retryable?: boolean;
  /** Structured details safe to show to the caller (never secrets or card data). */
  details?: Record<string, unknown>;
}

/** Base class of every error Saffron raises deliberately. */
export class SaffronError extends Error {
  override readonly name: string = 'SaffronError';
  /** Stable, machine-readable error code, e.g. `DEFINITION_INVALID`. */
  readonly code: string;
  /** True when repeating the same call can succeed. */
  readonly retryable: boolean;
  /** Structured, caller-safe details. */
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, options: SaffronErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }
}

/** Normalise anything thrown into an `Error`, once, at the boundary where it is caught. */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  if (typeof value === 'string') return new Error(value);
  try {
    return new Error(JSON.stringify(value));
  } catch {
    return new Error(String(value));
  }
}
