/**
 * Why a WASM binary could not be brought into the device's cache. Kept apart from the
 * runtime's WasmError (which describes running a guest): a download that failed because
 * the network is down is worth retrying, one whose bytes do not hash to their address is an
 * incident, and a hash the registry does not know is an operator's mistake — the agent's
 * status and a sync_wasm ack must say which.
 */
import { SaffronError } from '../../runtime/index.js';

/** Every code a {@link WasmCacheError} can carry. */
export const WASM_CACHE_ERROR_CODES = [
  'WASM_HASH_INVALID',
  'WASM_NOT_IN_REGISTRY',
  'WASM_DOWNLOAD_FAILED',
  'WASM_DOWNLOAD_TOO_LARGE',
  'WASM_HASH_MISMATCH',
  'WASM_INVALID_MODULE',
  'WASM_COMPONENT_REFUSED',
  'WASM_CACHE_STOPPED',
] as const;
/** One of {@link WASM_CACHE_ERROR_CODES}. */
export type WasmCacheErrorCode = (typeof WASM_CACHE_ERROR_CODES)[number];

/**
 * A binary could not be cached.
 *
 * - `WASM_HASH_INVALID`: the hash asked for is not 64 lowercase hex characters.
 * - `WASM_NOT_IN_REGISTRY`: the cloud has no binary with that hash (404).
 * - `WASM_DOWNLOAD_FAILED`: network error or another HTTP error; retryable.
 * - `WASM_DOWNLOAD_TOO_LARGE`: the binary is over the size limit.
 * - `WASM_HASH_MISMATCH`: the bytes received do not hash to the address; nothing stored.
 * - `WASM_INVALID_MODULE`: the bytes hash right but are not a WebAssembly module or component.
 * - `WASM_COMPONENT_REFUSED`: a component the sandbox will not run: it imports more than the
 *   WASI 0.2 subset Saffron provides (sockets, HTTP…) or exports nothing callable.
 * - `WASM_CACHE_STOPPED`: the cache was stopped while the download ran.
 */
export class WasmCacheError extends SaffronError {
  override readonly name = 'WasmCacheError';
  declare readonly code: WasmCacheErrorCode;

  constructor(
    code: WasmCacheErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown>; retryable?: boolean } = {},
  ) {
    super(code, message, options);
  }
}
