/**
 * Store errors, and the one place where driver errors become Saffron errors. A unique
 * violation becomes a ConflictError; a serialization failure, deadlock or SQLITE_BUSY a
 * retryable StoreUnavailableError; anything else keeps the driver error as `cause`.
 */
import { SaffronError, type SaffronErrorOptions, toError } from '../errors.js';

/** A write collided with an existing row (unique key, optimistic version check). */
export class ConflictError extends SaffronError {
  override readonly name = 'ConflictError';
  constructor(message: string, options: SaffronErrorOptions = {}) {
    super('CONFLICT', message, options);
  }
}

/** The database could not be reached or asked us to retry (serialization, busy). */
export class StoreUnavailableError extends SaffronError {
  override readonly name = 'StoreUnavailableError';
  constructor(message: string, options: SaffronErrorOptions = {}) {
    super('STORE_UNAVAILABLE', message, { retryable: true, ...options });
  }
}

/** The caller asked for a store the configuration cannot describe (bad URL, bad path). */
export class StoreConfigError extends SaffronError {
  override readonly name = 'StoreConfigError';
  constructor(message: string, options: SaffronErrorOptions = {}) {
    super('STORE_CONFIG', message, options);
  }
}

/** Any other database failure. */
export class StoreError extends SaffronError {
  override readonly name = 'StoreError';
  constructor(message: string, options: SaffronErrorOptions = {}) {
    super('STORE_ERROR', message, options);
  }
}

const RETRYABLE_PG = new Set([
  '40001',
  '40P01',
  '55P03',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
]);
const RETRYABLE_NODE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/** Translate a driver error into a Saffron error; Saffron errors pass through unchanged. */
export function translateDriverError(value: unknown, operation: string): SaffronError {
  if (value instanceof SaffronError) return value;
  const error = toError(value);
  const code = (error as { code?: unknown }).code;
  if (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  ) {
    return new ConflictError(`${operation}: row already exists`, { cause: error });
  }
  if (typeof code === 'string' && (RETRYABLE_PG.has(code) || RETRYABLE_NODE.has(code))) {
    return new StoreUnavailableError(`${operation}: ${error.message}`, { cause: error });
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new StoreUnavailableError(`${operation}: database is busy`, { cause: error });
  }
  if (error instanceof AggregateError && error.errors.length > 0) {
    return translateDriverError(error.errors[0], operation);
  }
  return new StoreError(`${operation}: ${error.message}`, { cause: error });
}
