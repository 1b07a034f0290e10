/**
 * The edge agent (DESIGN §5–6): offline-first workflows on SQLite, store-and-forward
 * payments, sync, signed config, commands, WASM cache and metrics, talking to the cloud
 * over signed HTTP and a WebSocket.
 */
export {
  createCloudClient,
  type CloudClient,
  type CloudClientOptions,
  type CloudRequest,
} from './cloud/cloudClient.js';
export { systemTimers, type EdgeTimers } from './timers/timers.js';
export { backoffDelay, type BackoffPolicy } from './timers/backoff.js';
export {
  COMMAND_KEY_PREFIX,
  readLastSync,
  readSyncState,
  recordLastSync,
  SYNC_STATE_KEYS,
  writeSyncState,
  type SyncStateEntry,
} from './state/syncState.js';
export {
  CONFIG_ERROR_CODES,
  CONFIG_REJECTION_CODES,
  ConfigError,
  type ConfigErrorCode,
  type ConfigRejectionCode,
} from './config/errors.js';
export {
  CONFIG_DOCUMENT_NAMES,
  CONFIG_DOCUMENTS,
  type ConfigDocumentName,
  type VerifiedConfig,
} from './config/documents.js';
export {
  checkConfigDocument,
  CONFIG_POLL_INTERVAL_BOUNDS,
  configPollIntervalMs,
} from './config/checkConfigDocument.js';
export { readCachedConfig, type CachedConfig } from './config/configCache.js';
export {
  ed25519KeyId,
  resolveCloudPublicKey,
  type PinnedPublicKey,
  type ResolvedPublicKey,
  type ResolvePublicKeyDeps,
} from './config/pinPublicKey.js';
export {
  createConfigSync,
  type ConfigDocumentStatus,
  type ConfigPollOutcome,
  type ConfigPollResult,
  type ConfigRejection,
  type ConfigSync,
  type ConfigSyncDeps,
  type ConfigSyncEvent,
  type ConfigSyncStatus,
} from './config/configSync.js';
export { COMMAND_ERROR_CODES, CommandError, type CommandErrorCode } from './commands/errors.js';
export {
  parseCommand,
  type CommandContext,
  type CommandHandler,
  type CommandHandlers,
  type EdgeCommand,
} from './commands/command.js';
export {
  listUnackedCommands,
  readCommandEntry,
  type CommandAck,
  type CommandLedgerEntry,
} from './commands/commandLedger.js';
export {
  createCommandChannel,
  type CommandChannel,
  type CommandChannelDeps,
  type CommandChannelEvent,
  type CommandChannelStatus,
  type CommandVia,
} from './commands/commandChannel.js';
export { defaultCommandHandlers, type DefaultHandlerDeps } from './commands/defaultHandlers.js';
export { WASM_CACHE_ERROR_CODES, WasmCacheError, type WasmCacheErrorCode } from './wasm/errors.js';
export { DEFAULT_MAX_WASM_BYTES, downloadWasm } from './wasm/downloadWasm.js';
export { wasmHashesOf } from './wasm/wasmHashes.js';
export {
  createWasmCache,
  type WasmCache,
  type WasmCacheDeps,
  type WasmCacheEvent,
  type WasmEnsureResult,
  type WasmPrefetch,
  type WasmPrefetchItem,
  type WasmPrefetchReport,
} from './wasm/wasmCache.js';
export {
  collectMetrics,
  diskUsagePercent,
  type CollectMetricsDeps,
  type EdgeMetricsReport,
} from './metrics/collectMetrics.js';
export { countPendingTransactions } from './metrics/countPendingTransactions.js';
export {
  createMetricsReporter,
  type MetricsEvent,
  type MetricsReporter,
  type MetricsReporterDeps,
  type MetricsReportOutcome,
} from './metrics/metricsReporter.js';
