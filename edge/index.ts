/**
 * The edge agent (docs/architecture.md#security, #cloud-and-edge): offline-first workflows on SQLite, store-and-forward
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
export { backoffDelay, type BackoffPolicy } from '../runtime/index.js';
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
export { checkCloudUrl, isLoopbackHost } from './config/cloudUrlPolicy.js';
export {
  ed25519KeyId,
  parseCloudPublicKey,
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
export { TRANSACTIONS_BATCH_PATH, uploadTransactions } from './cloud/uploadTransactions.js';
export { SAF_ERROR_CODES, SafError, type SafErrorCode } from './saf/errors.js';
export { CARD_KEY_BYTES, decryptCardPayload, encryptCardPayload } from './saf/cardPayload.js';
export { REDACTED, sanitizeFinalState, type SanitizedState } from './saf/finalState.js';
export {
  buildSafRecord,
  type BuiltSafRecord,
  type SafRecordContext,
  type SafRecordSource,
} from './saf/buildSafRecord.js';
export { readSafBacklog, type SafBacklog } from './saf/readSafBacklog.js';
export {
  evaluateSafLimits,
  safLimitsConfigSchema,
  safLimitsFromConfig,
  type SafLimitCode,
  type SafLimitRequest,
  type SafLimits,
  type SafLimitVerdict,
} from './saf/safLimits.js';
export {
  createSafRecorder,
  type SafBacklogSummary,
  type SafRecorder,
  type SafRecorderEvent,
  type SafRecorderOptions,
} from './saf/safRecorder.js';
export { SAF_SYNC_ERROR_CODES, SafSyncError, type SafSyncErrorCode } from './sync/errors.js';
export {
  createSafSync,
  DEFAULT_SAF_BACKOFF,
  DEFAULT_SAF_BATCH_SIZE,
  type SafSync,
  type SafSyncEvent,
  type SafSyncOptions,
  type SafSyncReason,
  type SafSyncResult,
  type SafUploadRequest,
  type SafUploadResult,
} from './sync/safSync.js';
export {
  createEdgeAgent,
  type EdgeAgent,
  type EdgeAgentOptions,
  type EdgeAgentStatus,
} from './agent/createEdgeAgent.js';
export { AGENT_ERROR_CODES, AgentError, type AgentErrorCode } from './agent/errors.js';
export type { AgentLogEntry, AgentLogger, AgentLogLevel } from './agent/agentLog.js';
export type { RestartRequest } from './agent/agentHandlers.js';
export type { LocalRunOutcome, LocalRunRequest } from './agent/runLocalWorkflow.js';
export { loadCardKey, type CardKey } from './agent/cardKeyFile.js';
export {
  createWalCheckpoints,
  WAL_BACKSTOP_PAGES,
  WAL_IDLE_CHECK_MS,
  type WalCheckpointEvent,
  type WalCheckpoints,
  type WalCheckpointsOptions,
} from './agent/walCheckpoints.js';
export { createLocalApi, type LocalApi, type LocalApiOptions } from './local/localApi.js';
export { bearerMatches, loadLocalToken, type LocalToken } from './local/localToken.js';
