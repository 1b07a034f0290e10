/**
 * WASM steps' sandbox and the WebAssembly registry: a piscina pool running WASI preview1
 * guests on `node:wasi` with in-memory stdio, a memory cap and a per-call timeout; binary
 * sources by hash (cloud registry files, edge cache); registration and lookup.
 */
export { WASM_ERROR_CODES, WasmError, type WasmErrorCode } from './errors.js';
export { hashMatches, isSha256Hex, sha256Hex } from './hash.js';
export { capMemory, hasWasmHeader, WASM_PAGE_BYTES } from './memoryLimit.js';
export {
  createWasmRunner,
  createWasmThreadPool,
  DEFAULT_WASM_MAX_OUTPUT_BYTES,
  DEFAULT_WASM_MEMORY_LIMIT_MB,
  type WasmCall,
  type WasmCallResult,
  type WasmLimits,
  type WasmRunner,
  type WasmRunnerOptions,
  type WasmThreadPool,
} from './runner.js';
export type { WasmThreadStats } from './worker.js';
export {
  deviceCacheWasmSource,
  mapWasmSource,
  registryWasmSource,
  storeWasmSource,
  type WasmBinarySource,
} from './source.js';
export {
  DEFAULT_WASM_STORAGE_DIR,
  resolveStoredBlob,
  wasmBlobPath,
  wasmStorageDir,
} from './storageDir.js';
export { compareSemver, isSemver } from './semver.js';
export {
  cacheWasmBinary,
  checkWasmModule,
  findWasmComponent,
  readWasmComponentBytes,
  registerWasmComponent,
  type RegisteredWasm,
  type WasmRegistration,
} from './registry.js';
export { hasComponentHeader, wasmBinaryKind, type WasmBinaryKind } from './kind.js';
export { checkWasmBinary } from './registry.js';
export { PROVIDED_INTERFACES } from './transpile.js';
