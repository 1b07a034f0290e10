/**
 * Errors of WASM steps and of the WebAssembly registry. A WASM step's failure is one of a
 * closed set of causes, each with its own code, so an operator reading the audit log (or a
 * test) can tell a tampered binary from a guest that exited 1 without parsing messages. None
 * is retryable: running the same bytes on the same input repeats the same outcome, and a
 * missing or tampered binary needs an operator, not a retry.
 */
import { SaffronError } from '../errors.js';

/** Every code a {@link WasmError} can carry. */
export const WASM_ERROR_CODES = [
  'WASM_MODULE_NOT_FOUND',
  'WASM_PATH_REFUSED',
  'WASM_SOURCE_FAILED',
  'WASM_HASH_MISMATCH',
  'WASM_INVALID_MODULE',
  'WASM_LINK_FAILED',
  'WASM_IMPORT_REFUSED',
  'WASM_TRANSPILE_FAILED',
  'WASM_MEMORY_LIMIT',
  'WASM_ENTRYPOINT_MISSING',
  'WASM_EXIT_NONZERO',
  'WASM_GUEST_ERROR',
  'WASM_TRAP',
  'WASM_TIMEOUT',
  'WASM_OUTPUT_INVALID',
  'WASM_OUTPUT_TOO_LARGE',
  'WASM_THREAD_FAILED',
  'WASM_ABORTED',
  'WASM_RUNNER_CLOSED',
  'WASM_VERSION_INVALID',
  'WASM_METADATA_INVALID',
  'WASM_REGISTRY_UNSUPPORTED',
] as const;
/** One of {@link WASM_ERROR_CODES}. */
export type WasmErrorCode = (typeof WASM_ERROR_CODES)[number];

/**
 * A WASM module could not be resolved, verified or run, or a registry call was refused.
 *
 * Execution codes (all make `fallback_on_error` apply, except `WASM_ABORTED` and
 * `WASM_RUNNER_CLOSED`, which mean the engine itself gave up on the step):
 * - `WASM_MODULE_NOT_FOUND`: no binary with that hash in the store (or its file is gone).
 * - `WASM_PATH_REFUSED`: the registry row's path leaves `WASM_STORAGE_DIR`.
 * - `WASM_SOURCE_FAILED`: reading the binary failed (database or file error).
 * - `WASM_HASH_MISMATCH`: the bytes read do not hash to the requested SHA-256.
 * - `WASM_INVALID_MODULE`: not a valid module, or no exported `memory`.
 * - `WASM_LINK_FAILED`: the module imports something the sandbox does not provide (for a
 *   component: an interface other than the WASI 0.2 stdio, clocks, random and the empty
 *   filesystem; `details.refused_imports` lists them).
 * - `WASM_IMPORT_REFUSED`: a component called a function of a provided interface that the
 *   sandbox refuses (a newer WASI function, a filesystem operation).
 * - `WASM_TRANSPILE_FAILED`: a component could not be turned into JavaScript (jco missing or
 *   failing on bytes that are a valid component).
 * - `WASM_MEMORY_LIMIT`: the module declares more initial memory than the cap.
 * - `WASM_ENTRYPOINT_MISSING`: neither `_start` nor the entrypoint function is exported.
 * - `WASM_EXIT_NONZERO`: the guest exited with a code other than 0 (`details.exit_code`);
 *   a `wasi:cli/run` component that fails reports 1 (WASI 0.2 exits carry no code).
 * - `WASM_GUEST_ERROR`: a typed component's function returned `err(message)`.
 * - `WASM_TRAP`: the guest trapped (unreachable, out-of-bounds access, stack overflow…).
 * - `WASM_TIMEOUT`: `timeout_ms` elapsed; the worker thread running it was terminated.
 * - `WASM_OUTPUT_INVALID`: stdout was not one JSON object.
 * - `WASM_OUTPUT_TOO_LARGE`: the guest wrote more than the stdout limit.
 * - `WASM_THREAD_FAILED`: the worker thread died for another reason.
 */
export class WasmError extends SaffronError {
  override readonly name = 'WasmError';
  declare readonly code: WasmErrorCode;

  constructor(
    code: WasmErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, { ...options, retryable: false });
  }
}
