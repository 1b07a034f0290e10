/**
 * Persistence: one Kysely query layer over PostgreSQL, PGlite and SQLite, with small
 * operations grouped by concern — the engine's tables (workflows, tasks, timers, audit,
 * schedules…) and the terminal's. The cloud-only tables' operations live beside the gateway
 * features that use them (`gateway/<feature>/store`).
 */
export { executeCached } from './cachedQuery.js';
export type { Codec } from './codec.js';
export type { CloudDatabase, CoreDatabase, Database, EdgeDatabase } from './database.js';
export {
  ConflictError,
  StoreConfigError,
  StoreError,
  StoreUnavailableError,
  translateDriverError,
} from './errors.js';
export { openStore, type OpenStoreOptions } from './openStore.js';
export type { PostgresStoreOptions } from './postgres/openPostgresStore.js';
export {
  asCloud,
  asEdge,
  isCloudStore,
  isEdgeStore,
  type CloudHandle,
  type CloudStore,
  type EdgeHandle,
  type EdgeStore,
  type Store,
  type StoreDriver,
  type StoreHandle,
  type TransactionOptions,
} from './store.js';
export {
  describeStoreTarget,
  parseStoreTarget,
  redactUrl,
  STORE_DIALECTS,
  type StoreDialect,
  type StoreTarget,
} from './target.js';
export {
  currentMigration,
  migrate,
  MigrationFailedError,
  pendingMigrations,
  UnknownMigrationError,
  type MigrationProgress,
  type MigrationResult,
} from './migrate/migrate.js';
export { migrationChecksum, type Migration } from './migrate/migration.js';
export { ensureEdgeSchema } from './sqlite/ensureEdgeSchema.js';
export { SAF_BACKLOG_TOTALS_KEY } from './sqlite/safBacklogTotals.js';
export {
  checkpointWal,
  setWalAutocheckpoint,
  sqliteChangeCount,
  type WalCheckpointResult,
} from './sqlite/walCheckpoint.js';
export { validateSchema, type SchemaValidation } from './validateSchema.js';
export { collectStats, type StoreStats } from './collectStats.js';
export type { NewWorkflow, NewWorkflowRow, WorkflowRecord } from './workflows/record.js';
export { insertWorkflow } from './workflows/insertWorkflow.js';
export { upsertWorkflow } from './workflows/upsertWorkflow.js';
export { updateWorkflow, type WorkflowChanges } from './workflows/updateWorkflow.js';
export { getWorkflow, getWorkflowByIdempotencyKey } from './workflows/getWorkflow.js';
export { listWorkflows, type WorkflowFilter } from './workflows/listWorkflows.js';
export { deleteWorkflow } from './workflows/deleteWorkflow.js';
export { appendAuditEvents, type AuditEvent } from './audit/appendAuditEvents.js';
export { listAuditEvents, type StoredAuditEvent } from './audit/listAuditEvents.js';
export { beatHeartbeat, type Heartbeat } from './heartbeats/beatHeartbeat.js';
export { listStaleHeartbeats, type StaleHeartbeat } from './heartbeats/listStaleHeartbeats.js';
export { insertTasks, type NewTask } from './tasks/insertTasks.js';
export { listTasks, type TaskRecord } from './tasks/listTasks.js';
export { appendStepLogs, type StepLog } from './observations/appendStepLogs.js';
export { recordMetrics, type WorkflowMetric } from './observations/recordMetrics.js';
export { recordCompensation, type CompensationEntry } from './observations/recordCompensation.js';
export { deleteHeartbeat } from './heartbeats/deleteHeartbeat.js';
export { insertTimer, type NewTimer } from './timers/insertTimer.js';
export { settleTimers } from './timers/settleTimers.js';
export {
  getScheduledWorkflow,
  upsertScheduledWorkflow,
  type ScheduledWorkflow,
  type StoredSchedule,
} from './schedules/upsertScheduledWorkflow.js';
export { updateWorkflows, type WorkflowRowUpdate } from './workflows/updateWorkflows.js';
export { beatHeartbeats, deleteHeartbeats } from './heartbeats/beatHeartbeats.js';
export { refreshHeartbeats, takeOverHeartbeat } from './heartbeats/refreshHeartbeats.js';
export { insertWorkflows } from './workflows/insertWorkflows.js';
export { commitStepWrites } from './workflows/commitStepWrites.js';
export type { StepWrite } from './workflows/stepWrite.js';
export { writeStepRows } from './workflows/writeStepRows.js';
export { claimTasks, type TaskClaim } from './tasks/claimTasks.js';
export type { ClaimedTask } from './tasks/claimedTask.js';
export { failUnfinishedTasks } from './tasks/failUnfinishedTasks.js';
export { finishTask, type TaskFinish } from './tasks/finishTask.js';
export { listTaskGroup } from './tasks/listTaskGroup.js';
export { lockTaskGroup } from './tasks/lockTaskGroup.js';
export { releaseExpiredTasks } from './tasks/releaseExpiredTasks.js';
export {
  keepTaskClaims,
  registerWorker,
  releaseDeadWorkers,
  touchWorker,
  type HeldClaims,
  type WorkerNode,
} from './workers/registerWorker.js';
export { withAdvisoryLock } from './postgres/leadership.js';
export { listenForTasks, notifyTasks, TASKS_CHANNEL } from './postgres/taskNotifications.js';
export { fireTimer, listDueTimers, type DueTimer } from './timers/listDueTimers.js';
export { nextTimerDue } from './timers/nextTimerDue.js';
export { advanceSchedule, listDueSchedules } from './schedules/dueSchedules.js';
export {
  listScheduledWorkflows,
  type ScheduleListing,
} from './schedules/listScheduledWorkflows.js';
export { deleteScheduledWorkflow } from './schedules/deleteScheduledWorkflow.js';
export { getHeartbeat } from './heartbeats/getHeartbeat.js';
export {
  listWorkflowDefinitions,
  saveWorkflowDefinition,
  type StoredDefinition,
} from './definitions/workflowDefinitions.js';
export type { WasmComponent } from './wasm/record.js';
export { insertWasmComponent, type NewWasmComponent } from './wasm/insertWasmComponent.js';
export { getWasmComponent } from './wasm/getWasmComponent.js';
export { listWasmComponents } from './wasm/listWasmComponents.js';
export { putCachedWasm } from './wasm/putCachedWasm.js';
export { getCachedWasm, touchCachedWasm } from './wasm/getCachedWasm.js';
export { listCachedWasm, type CachedWasm } from './wasm/listCachedWasm.js';
export {
  EDGE_SUMMARY_SOURCE,
  storeEdgeSummaries,
  type SummaryOutcome,
} from './workflows/storeEdgeSummaries.js';
export {
  COMMANDS_CHANNEL,
  notifyCommands,
  parseCommandNotification,
  type CommandNotification,
} from './postgres/commandNotifications.js';
export {
  CHANGES_CHANNEL,
  notifyChange,
  parseChange,
  type CacheChange,
} from './postgres/changeNotifications.js';
export {
  createChannelListener,
  type ChannelHandlers,
  type ChannelListener,
  type ChannelListenerOptions,
} from './postgres/listenChannel.js';
